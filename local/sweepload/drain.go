package sweepload

import (
	"context"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
)

// Run is one sweep run and the index around it.
type Run struct {
	Summary lifecycle.SweepSummary
	Took    time.Duration
	// DueBefore and DueAfter count the due instances per shard, read from
	// the index before and after the run (not from the run's summary).
	DueBefore, DueAfter []int
}

// PerSecond is the run's reviews per second of its wall-clock time.
func (r Run) PerSecond() float64 { return float64(r.Summary.Reviewed) / r.Took.Seconds() }

// Starved lists the shards that had due instances before the run and
// still had as many after it.
func (r Run) Starved() []int {
	var out []int
	for sh, n := range r.DueBefore {
		if n > 0 && r.DueAfter[sh] >= n {
			out = append(out, sh)
		}
	}
	return out
}

// Result is a whole drain.
type Result struct {
	Runs []Run
	Took time.Duration // the runs' time, index counts apart
	Left int           // still due after the last run
}

// Drain runs svc.Sweep until nothing is due or maxRuns have run, each run
// under a context with runTimeout, as the Lambda's timeout is. The clock
// (svc's Now) moves on a minute before each run, as the schedule's would,
// so consecutive runs start at consecutive shards. onRun, if not nil, hears
// of each run as it ends.
func Drain(ctx context.Context, svc *lifecycle.Service, clock *harness.Clock, runTimeout time.Duration, maxRuns int, onRun func(Run)) (Result, error) {
	var res Result
	due, err := DuePerShard(ctx, svc.Store, clock.Now())
	if err != nil {
		return res, err
	}
	for len(res.Runs) < maxRuns && sum(due) > 0 {
		clock.Advance(time.Minute)
		run := Run{DueBefore: due}
		runCtx, cancel := context.WithTimeout(ctx, runTimeout)
		began := time.Now()
		run.Summary, err = svc.Sweep(runCtx)
		run.Took = time.Since(began)
		cancel()
		res.Took += run.Took
		if err != nil {
			return res, fmt.Errorf("run %d: %w", len(res.Runs)+1, err)
		}
		if run.Took > runTimeout {
			return res, fmt.Errorf("run %d took %s, past its %s timeout", len(res.Runs)+1, run.Took, runTimeout)
		}
		if due, err = DuePerShard(ctx, svc.Store, clock.Now()); err != nil {
			return res, err
		}
		run.DueAfter = due
		res.Runs = append(res.Runs, run)
		if onRun != nil {
			onRun(run)
		}
	}
	res.Left = sum(due)
	return res, nil
}

// DuePerShard counts what the index holds due at now, shard by shard.
func DuePerShard(ctx context.Context, s lifecycle.Store, now time.Time) ([]int, error) {
	counts := make([]int, s.HealthShards())
	for sh := range counts {
		cursor := ""
		for {
			ids, next, err := s.Due(ctx, sh, now, 1<<20, cursor)
			if err != nil {
				return nil, fmt.Errorf("count due instances: %w", err)
			}
			counts[sh] += len(ids)
			if cursor = next; cursor == "" {
				break
			}
		}
	}
	return counts, nil
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
