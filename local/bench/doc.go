// Package bench measures the service side by side with references on one
// machine, for `make bench`: the allocate overhead of the local stack
// against a direct call to the same GameFabric stand-in, the cost of a
// fallback, sustained throughput with an exactly-once check, DynamoDB
// requests and capacity per allocation counted by SDK middleware, the
// AWS cost per million allocations derived from those measurements, a
// session placed in a game server's free room against the same direct
// call and what a game costs when servers hold several (rooms), and how
// many health sweep runs a backlog of due instances takes.
//
// Every component is real (DynamoDB Local, moto, the built bootstraps
// behind the local HTTP API) except GameFabric, which is local/gfemu scripted with a
// fixed delay. Every phase is bounded in count and time, and listens on
// 127.0.0.1 only.
package bench
