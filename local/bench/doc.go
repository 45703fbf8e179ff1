// Package bench measures the service side by side with references on one
// machine for `make bench`, and renders docs/benchmarks.md.
//
// Each figure is in one file: cold start and binary size coldstart.go
// (its setup coldstart_fixture.go, its init split coldinit.go), overhead
// and fallback overhead.go, at Lambda's CPU share cpu.go, DynamoDB
// requests requests.go, where the CPU goes profile.go, a session in a room
// roomlatency.go, throughput, its bottleneck, exactly once and the
// same-instance race throughput.go, the cost model and its billed inputs
// cost.go, the game server's calls lifecycle.go, lifecycle events
// events.go, a game on room servers roomscost.go, queued placements
// queued.go and queuedcost.go (their rig queuedrig.go), the health sweep
// sweep.go, the machine and micro-benchmarks machine.go. Plumbing: run.go,
// report.go with report.md.tmpl, localstack.go (the stack and its
// GameFabric stand-in), inprocess.go (allocations in process and through
// the API), sdkcount.go.
//
// Every component is real (DynamoDB Local, moto, the built bootstraps
// behind the local HTTP API) except GameFabric, local/gfemu scripted with
// a fixed delay. Every phase is bounded in count and time, on 127.0.0.1.
package bench
