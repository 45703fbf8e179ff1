// Package gfemu is the one GameFabric of the local stack and the tests: an
// in-memory emulator of Nitrado's GameFabric Allocators and Ping Service.
// An Emulator is one Allocator: the Registry game servers keep themselves
// in and the Allocation endpoint that hands one of them out, with its own
// tokens and rate limit. A PingService is the managed Ping Service, with
// its own URL and tokens, which discovers game servers through one or more
// Allocators. make dev (local/stack) runs them as an installation; the
// tests and the benchmark Start an Installation on loopback and script it:
// per region string, answers (Queue, Always) taken before the registry is
// asked, with delays, any status, raw bodies and answers cut short; the
// Ping Service's answer (SetRegions, Script); token rotations
// (SetTokens); and a log of every allocate call (Calls).
//
// It follows GameFabric's public docs (repository GameFabric/docs, under
// src/multiplayer-servers/: architecture/allocators.md, sidecars.md and
// ping-services.md, and multiplayer-services/server-allocation/; the
// Allocator, Registry and Ping Discovery API pages under
// src/api/multiplayer-servers/). Allocate's request and answer, and a ping
// target, are the client's own types (shared/gamefabric): the protocol is
// the same, and this package's tests send raw JSON bodies and read the
// answers' fields by name, so the client cannot drift from the documented
// shape unnoticed. The Registry's bodies exist only here.
//
// Routes of an Allocator (Prefix defaults to "/allocator/local"):
//
//	POST   {Prefix}/servers                   register (registry token)
//	POST   {Prefix}/servers/{addr}/keepalive  extend expiry (registry token)
//	DELETE {Prefix}/servers/{addr}            deregister (registry token)
//	POST   {Prefix}/allocate                  allocate (allocator token)
//
// and of the Ping Service (Path defaults to "/ping"):
//
//	GET    {Path}                             ping discovery (ping token)
//
// Errors are always {"error": "..."}. Where the public protocol is silent
// the emulator chooses, and these choices are what tests may rely on:
//
//   - Tokens: "Authorization: Bearer <t>" where t is any listed token (lists
//     hold several during rotation). An empty list admits nobody, so a
//     misconfigured stack fails loudly instead of running open. Registry,
//     Allocator and Ping Service tokens are separate lists.
//   - Registration: only address (host:port) and priority (>= 0) are
//     required, as documented; nothing else is. The required-attribute keys
//     travel in "requiredAttributes" (our name: the wire name is not public;
//     the sidecar's setting is ALLOC_REQUIRED_ATTRS) and are optional. A
//     required key the server does not offer among "attributes" is accepted
//     with a warning in the log: no request can match such a server. The
//     callback token is optional (GameFabric only recommends one); a
//     callback without a URL is rejected. Unknown fields, callback URLs that
//     are not http/https, ports outside 1-65535 and a timeout outside
//     1-86400 s are rejected with 400. A callback URL without a scheme gets
//     http://. A server without region or callback is accepted; it can never
//     be allocated (no region) or is allocated without a callback (token "",
//     payload null).
//   - Registration answers 201 when the address is new and 200 when it
//     replaced a registration, with {address, region, priority, timeout,
//     expiresAt}; a replacement counts as a new registration for
//     tie-breaking. A server whose last registration or keep-alive is more
//     than its timeout ago is gone (checked lazily on every access). A
//     keep-alive body may be empty; its timeout, when given, replaces the
//     server's. Keep-alive and deregister answer 404 for unknown, expired
//     or allocated addresses.
//   - Allocate: authentication comes first, then the rate limit (so strangers
//     cannot drain the bucket), then the body; unknown body fields are 400.
//     The region is matched exactly against the region string servers
//     registered with (the Allocator's spec.region, ALLOC_REGION).
//   - Allocation callback: the request's payload is POSTed verbatim as
//     application/json (null when absent). GameFabric says only that the
//     registered token travels "in the Authorization header", so the header
//     is the token verbatim by default and "Bearer <token>" with
//     Config.CallbackBearer; a server registered without a token gets no
//     header. The chosen server leaves the registry before its callback is
//     called, so concurrent calls never share one. A callback that fails to
//     connect, times out, answers non-2xx (redirects included), or answers
//     2xx with a body that is not JSON marks a dead server: it stays removed
//     and the next candidate is tried. Callbacks run detached from the
//     caller's request, so a caller hanging up never leaves a server
//     half-allocated; no further candidates are tried once it has hung up.
//   - "No matching server" answers 404 (GameFabric's real status is not
//     public; our client treats every non-2xx alike anyway).
//   - Drain (drain.go) runs a region string dry for a while, as a launch
//     that took every buffered server would: its allocates answer that 404
//     with a Retry-After of the time left, its servers stay registered and
//     are allocated again once it refills. Nothing GameFabric documents;
//     make dev uses it to show queued placements waiting.
//   - Ping lists, per GameFabric Region, one udp target per distinct ip:port
//     of the servers registered (unallocated, unexpired) with the
//     Allocators it discovers through, using ports.ping, else ports.game,
//     else the port of the address. Regions are named by GameFabric Region
//     name, not by Allocator region string: each PingSource maps its
//     Allocator's region strings back to Region names (a string it does not
//     list is reported as it is), because clients pick a Region and the
//     allocation service maps the Region to its Allocator. Servers without
//     region are not listed. The shape is our canonical one, decoded by
//     shared/gamefabric.DecodePing.
//   - Unknown routes answer 404 and wrong methods 405 (with Allow), as JSON.
//     An Allocator has no ping route.
//   - A scripted allocation (an Answer with no status or raw body) hands
//     out 127.0.0.1 at the Allocator's next port from 7000, with callback
//     token "callback-<port>" and payload {"accepted": <GameInstanceId>},
//     what our sample server's callback answers. A scripted region never
//     asks the registry, drains or callbacks.
package gfemu
