// Package gfproto is the GameFabric wire format as our two stand-ins speak
// it: local/gfemu, the emulated Allocators and Ping Service of `make dev`,
// and local/gfstub, the scriptable stand-in of the tests and the benchmark.
// It holds the request and answer bodies of the Allocator's allocate and
// Registry endpoints and of the Ping Service, the {"error": "..."} body
// every failure carries, the bearer-token check against a rotating list,
// the 429 with Retry-After, and bounded JSON decoding. The protocol follows
// GameFabric's public docs (repository GameFabric/docs:
// src/multiplayer-servers/architecture/allocators.md, sidecars.md and
// ping-services.md; src/multiplayer-servers/multiplayer-services/
// server-allocation/; the Allocator, Registry and Ping Discovery API pages
// under src/api/multiplayer-servers/). Where they are silent, the names
// here are ours; local/gfemu's doc lists those choices.
//
// It is deliberately separate from shared/gamefabric, our client: the
// stand-ins model GameFabric, so a change to the client cannot quietly
// change what it is tested against.
package gfproto
