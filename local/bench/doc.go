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
// Each figure of docs/benchmarks.md is one file: cold start coldstart.go
// (its setup coldstart_fixture.go, its init split coldinit.go), binary size sizes.go, overhead
// overhead.go, at Lambda's CPU share cpushare.go, DynamoDB requests
// requests.go, where the CPU goes profile.go, a session in a room
// roomlatency.go, fallback fallback.go, throughput and its bottleneck
// throughput.go, exactly once and the same-instance race exactlyonce.go,
// the cost model cost.go (its inputs billed.go), the game server's calls
// lifecycle.go, lifecycle events events.go, a game on room servers
// roomscost.go, queued placements queued.go and queuedcost.go (their rig
// queuedrig.go), the health sweep sweep.go, micro-benchmarks
// microbench.go, the machine machine.go. The rest is plumbing shared by
// several: run.go, report.go with report.md.tmpl, linkbackrig.go,
// roomhost.go, sdkcount.go, inprocess.go, event.go, localstack.go,
// standin.go, apiclient.go, cpu.go, stats.go.
//
// Every component is real (DynamoDB Local, moto, the built bootstraps
// behind the local HTTP API) except GameFabric, which is local/gfemu scripted with a
// fixed delay. Every phase is bounded in count and time, and listens on
// 127.0.0.1 only.
package bench
