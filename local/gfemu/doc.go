// Package gfemu is the one GameFabric of the local stack and the tests: an
// in-memory emulator of GameFabric's Allocators and Ping Service. An
// Emulator is one Allocator (its Registry and its Allocation endpoint, its
// own tokens and rate limit); a PingService discovers game servers through
// one or more of them. make dev (local/stack) runs them as an installation;
// the tests and the bench Start an Installation and script it: per region
// string, answers (Queue, Always) taken before the registry is asked, with
// delays, statuses, raw bodies and answers cut short; the Ping Service's
// answer (SetRegions, Script); token rotations (SetTokens); and a log of
// every allocate call (Calls).
//
// It follows GameFabric's public docs (repository GameFabric/docs). The
// allocate request and answer and the ping target are the client's own
// types (shared/gamefabric); this package's tests send raw JSON and read
// fields by name, so the client cannot drift from the documented shape.
//
// Routes (Prefix defaults to "/allocator/local", the ping Path to "/ping"):
//
//	POST   {Prefix}/servers                   register (registry token)
//	POST   {Prefix}/servers/{addr}/keepalive  extend expiry (registry token)
//	DELETE {Prefix}/servers/{addr}            deregister (registry token)
//	POST   {Prefix}/allocate                  allocate (allocator token)
//	GET    {Path}                             ping discovery (ping token)
//
// Where the public protocol is silent the emulator chooses, and tests may
// rely on these choices:
//
//   - Errors are {"error": "..."}, unknown routes 404 and wrong methods 405
//     (with Allow). Tokens are "Authorization: Bearer <t>", t any token of
//     the service's list; an empty list admits nobody.
//   - Registration requires only address (host:port) and priority (>= 0),
//     as documented; "requiredAttributes" (our name) is optional. Unknown
//     fields, bad ports or callback URLs and a timeout outside 1-86400 s
//     are 400. A schemeless callback URL gets http://. A server without
//     region is never allocated. It answers 201 when new, 200 when it
//     replaced a registration. A server is gone once its timeout has passed
//     since its last registration or keep-alive; keep-alive and deregister
//     answer 404 for unknown, expired or allocated addresses.
//   - Allocate checks the token, then the rate limit (so strangers cannot
//     drain the bucket), then the body; the region string must match
//     exactly. "No matching server" is 404 (GameFabric's status is not
//     public). The callback POSTs the request's payload verbatim, with the
//     token verbatim in Authorization (Config.CallbackBearer: "Bearer
//     <token>"). The chosen server leaves the registry first; a callback
//     that fails, times out or answers non-2xx or a non-JSON 2xx drops it
//     and the next candidate is tried. Callbacks run detached from the
//     caller's request, so a caller hanging up never leaves a server
//     half-allocated.
//   - Ping lists, per GameFabric Region name (each PingSource maps its
//     Allocator's region strings back), one udp target per distinct ip:port
//     of the registered servers (ports.ping, else ports.game, else the
//     address's port), in our canonical shape (gamefabric.DecodePing).
//   - A scripted allocation hands out 127.0.0.1 at the next port from 7000,
//     callback token "callback-<port>", payload {"accepted": <GameInstanceId>}
//     (what the sample server's callback answers); a scripted region never
//     asks the registry, drains or calls back.
package gfemu
