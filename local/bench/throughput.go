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

// ThroughputOptions bounds each load level in count and time.
type ThroughputOptions struct {
	Callers  []int         // concurrent callers per level
	PerLevel int           // allocations per level at most
	Cap      time.Duration // per level
}

// ThroughputLevel is one load level: Callers closed-loop callers, each
// allocating fresh game instances back to back.
type ThroughputLevel struct {
	PoolSize, Callers  int
	Attempted, Created int
	Elapsed            time.Duration
	PerSecond          float64 // 201s per second of wall time
	Latency            Summary // of the 201s
	Outcomes           Counts
	CPU                CPUUsage
}

// MeasureThroughput runs one level and records every 201's server in
// created (game instance → server address) for the exactly-once check.
func MeasureThroughput(ctx context.Context, s *Stack, callers int, o ThroughputOptions, created *sync.Map, log io.Writer) (ThroughputLevel, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	lvl := ThroughputLevel{PoolSize: s.PoolSize, Callers: callers, Outcomes: Counts{}}
	client := newAPIClient(s.APIURL, callers)
	run := time.Now().UnixNano()
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
			for {
				n := next.Add(1)
				if n > int64(o.PerLevel) || ctx.Err() != nil {
					return
				}
				id := fmt.Sprintf("tp-p%d-c%d-%d-%d", s.PoolSize, callers, run, n)
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

// RaceResult is the same game instance requested by several callers at once.
type RaceResult struct {
	Instances, CallersEach int
	Outcomes               Counts
	Created                int // game instances answered 201 by exactly one caller
	MultipleCreated        int // game instances answered 201 more than once
}

// MeasureRace releases callersEach requests for each of instances game
// instances at the same moment; exactly one may allocate, the others must
// get 409 ALLOCATION_IN_PROGRESS or the replayed 200.
func MeasureRace(ctx context.Context, s *Stack, instances, callersEach int, created *sync.Map, log io.Writer) (RaceResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res := RaceResult{Instances: instances, CallersEach: callersEach, Outcomes: Counts{}}
	client := newAPIClient(s.APIURL, instances*callersEach)
	run := time.Now().UnixNano()
	var mu sync.Mutex
	wins := map[string]int{}
	for i := range instances {
		id := fmt.Sprintf("race-p%d-%d-%d", s.PoolSize, run, i)
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for range callersEach {
			wg.Go(func() {
				<-gate
				r := postAllocation(ctx, client, id, RegionOK)
				mu.Lock()
				defer mu.Unlock()
				res.Outcomes[r.Outcome()]++
				if r.Status == http.StatusCreated && r.server() != "" {
					wins[id]++
					created.Store(id, r.server())
				}
			})
		}
		close(gate)
		wg.Wait()
	}
	for _, n := range wins {
		if n == 1 {
			res.Created++
		} else {
			res.MultipleCreated++
		}
	}
	progress(log, "race: %d game instances × %d simultaneous callers: %s", instances, callersEach, res.Outcomes)
	if ctx.Err() != nil {
		return res, fmt.Errorf("race: %w", ctx.Err())
	}
	return res, nil
}
