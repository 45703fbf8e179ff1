package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ThroughputOptions bounds each load level: concurrent callers per level,
// allocations and time per level at most.
type ThroughputOptions struct {
	Callers  []int
	PerLevel int
	Cap      time.Duration
}

// ThroughputLevel is one load level: Callers closed-loop callers, each
// allocating fresh game instances back to back; PerSecond counts 201s per
// second of wall time, Latency is theirs.
type ThroughputLevel struct {
	PoolSize, Callers, Attempted, Created int
	Elapsed                               time.Duration
	PerSecond                             float64
	Latency                               Summary
	Outcomes                              Counts
	CPU                                   CPUUsage
}

// MeasureThroughput runs one level and records every 201's server in
// created (game instance → server address) for the exactly-once check.
func MeasureThroughput(ctx context.Context, s *Stack, callers int, o ThroughputOptions, created *sync.Map, log io.Writer) (ThroughputLevel, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	lvl := ThroughputLevel{PoolSize: s.PoolSize, Callers: callers, Outcomes: Counts{}}
	client := newAPIClient(s.APIURL, callers)
	run := runID()
	var next atomic.Int64
	var mu sync.Mutex
	var took []time.Duration
	watch, err := WatchCPU(s.Classify())
	if err != nil {
		return lvl, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(o.PerLevel) && ctx.Err() == nil; n = next.Add(1) {
				id := fmt.Sprintf("tp-p%d-c%d-%s-%d", s.PoolSize, callers, run, n)
				r := postAllocation(ctx, client, id, RegionOK)
				if ctx.Err() != nil && r.Err != nil {
					return // cut off by the time cap: not an outcome of the service
				}
				mu.Lock()
				lvl.Attempted++
				lvl.Outcomes[r.Outcome()]++
				if r.Status == http.StatusCreated && r.server() != "" {
					lvl.Created++
					took = append(took, r.Took)
					created.Store(id, r.server())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	lvl.Elapsed = time.Since(start)
	if lvl.CPU, err = watch.Stop(); err != nil {
		return lvl, err
	}
	lvl.PerSecond = float64(lvl.Created) / lvl.Elapsed.Seconds()
	lvl.Latency = Summarize(took)
	progress(log, "throughput: pool %d, %d callers: %d/%d created in %s = %.0f/s, p50 %s p99 %s; %s; machine CPU %.0f%%",
		s.PoolSize, callers, lvl.Created, lvl.Attempted, lvl.Elapsed.Round(time.Millisecond), lvl.PerSecond,
		fmtMs(lvl.Latency.P50), fmtMs(lvl.Latency.P99), lvl.Outcomes, 100*lvl.CPU.Busy)
	return lvl, nil
}

// Thresholds of the bottleneck analysis.
const (
	// busyShare is the machine CPU use above which the run counts as
	// CPU-bound: with a few percent of idle left, other processes and
	// scheduling gaps account for the rest.
	busyShare = 0.85
	// poolShare: reaching this share of the pool's ceiling means the pool binds.
	poolShare = 0.8
	// minGain is the throughput gain from a bigger pool that is more than
	// the run-to-run noise of a level (a few percent).
	minGain = 1.05
)

// Bottleneck is what limited throughput: the best level of each pool size,
// in the order measured. With two pool sizes or more, First and Largest
// are the first and last measured, Gain is Largest's best rate over
// First's, and PoolLimited whether that gain is more than noise.
type Bottleneck struct {
	Pools          []PoolFinding
	First, Largest *PoolFinding
	Gain           float64
	PoolLimited    bool
}

// PoolFinding compares a pool's best level with two ceilings: the machine's
// cores (measured CPU use) and the sandbox pool (pool size over the time
// one invocation holds a sandbox, measured unloaded).
type PoolFinding struct {
	Best                  ThroughputLevel
	PerInvocation         time.Duration
	Ceiling, CeilingShare float64 // allocations/s the pool allows, and Best's share of it
	CPUBound, PoolBound   bool
}

// AnalyseThroughput finds each pool size's best level and what bound it.
func AnalyseThroughput(levels []ThroughputLevel, perInvocation time.Duration) Bottleneck {
	var b Bottleneck
	index := map[int]int{}
	for _, l := range levels {
		i, ok := index[l.PoolSize]
		if !ok {
			i, index[l.PoolSize] = len(b.Pools), len(b.Pools)
			b.Pools = append(b.Pools, PoolFinding{PerInvocation: perInvocation})
		}
		if l.PerSecond > b.Pools[i].Best.PerSecond {
			b.Pools[i].Best = l
		}
	}
	for i := range b.Pools {
		f := &b.Pools[i]
		f.Ceiling = float64(f.Best.PoolSize) / perInvocation.Seconds()
		f.CeilingShare = f.Best.PerSecond / f.Ceiling
		f.CPUBound, f.PoolBound = f.Best.CPU.Busy >= busyShare, f.CeilingShare >= poolShare
	}
	if len(b.Pools) >= 2 {
		b.First, b.Largest = &b.Pools[0], &b.Pools[len(b.Pools)-1]
		b.Gain = b.Largest.Best.PerSecond / max(b.First.Best.PerSecond, 1e-9)
		b.PoolLimited = b.Gain > minGain
	}
	return b
}
