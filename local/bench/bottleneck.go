package bench

import (
	"fmt"
	"strings"
	"time"
)

// Bottleneck is what limited throughput, derived from the measurements.
type Bottleneck struct {
	Findings []string
}

// busyShare is the machine CPU use above which the run counts as CPU-bound:
// with a few percent of idle left, other processes and scheduling gaps
// account for the rest.
const busyShare = 0.85

// poolShare: reaching this share of the pool's ceiling means the pool binds.
const poolShare = 0.8

// minGain is the throughput gain from a bigger pool that is more than the
// run-to-run noise of a level (a few percent).
const minGain = 1.05

// AnalyseThroughput compares each level with two ceilings: the machine's
// cores (measured CPU use from /proc) and the sandbox pool (pool size over
// the time one invocation holds a sandbox, measured unloaded).
func AnalyseThroughput(levels []ThroughputLevel, perInvocation time.Duration) Bottleneck {
	var b Bottleneck
	best := map[int]ThroughputLevel{}
	var pools []int
	for _, l := range levels {
		if _, ok := best[l.PoolSize]; !ok {
			pools = append(pools, l.PoolSize)
		}
		if l.PerSecond > best[l.PoolSize].PerSecond {
			best[l.PoolSize] = l
		}
	}
	for _, pool := range pools {
		l := best[pool]
		ceiling := float64(pool) / perInvocation.Seconds()
		busy := l.CPU.Machine / float64(max(l.CPU.Cores, 1))
		group, share := l.CPU.Top()
		var why []string
		if busy >= busyShare {
			why = append(why, fmt.Sprintf("CPU-bound: the %d cores were %.0f%% busy, %.2f cores by this run's processes and %.2f by other processes on the machine; "+
				"the largest consumer was %s at %.0f%% of one core", l.CPU.Cores, 100*busy, l.CPU.Ours(), l.CPU.Others(), group, 100*share))
		}
		if l.PerSecond >= poolShare*ceiling {
			why = append(why, fmt.Sprintf("sandbox-pool-bound: %d sandboxes ÷ %s per invocation (unloaded) = %.0f/s ceiling, %.0f%% reached, "+
				"while latency grew with the callers", pool, fmtMs(perInvocation), ceiling, 100*l.PerSecond/ceiling))
		}
		if len(why) == 0 {
			why = append(why, fmt.Sprintf("neither the cores (%.0f%% busy) nor the pool (%.0f%% of its %.0f/s ceiling) saturated: latency inside the components grew with load",
				100*busy, 100*l.PerSecond/ceiling, ceiling))
		}
		b.Findings = append(b.Findings, fmt.Sprintf("Pool of %d sandboxes: best %.0f allocations/s with %d callers (p50 %s, p99 %s) — %s.",
			pool, l.PerSecond, l.Callers, fmtMs(l.Latency.P50), fmtMs(l.Latency.P99), strings.Join(why, "; ")))
	}
	if len(pools) >= 2 {
		a, z := best[pools[0]], best[pools[len(pools)-1]]
		gain := z.PerSecond / max(a.PerSecond, 1e-9)
		verdict := fmt.Sprintf("so the pool of %d was not what limited it", pools[0])
		if gain > minGain {
			verdict = fmt.Sprintf("so the pool of %d did limit it", pools[0])
			if zb := z.CPU.Machine / float64(max(z.CPU.Cores, 1)); zb >= busyShare {
				verdict += fmt.Sprintf(", and with %d the cores (%.0f%% busy) became the limit", pools[len(pools)-1], 100*zb)
			}
		}
		b.Findings = append(b.Findings, fmt.Sprintf("Raising the pool from %d to %d sandboxes changed the best rate from %.0f/s to %.0f/s (%.2f×), %s.",
			pools[0], pools[len(pools)-1], a.PerSecond, z.PerSecond, gain, verdict))
	}
	return b
}
