package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// OverheadGoal is issue 25's goal for end-to-end p50 / direct p50 on a
// full core (CPUShareGoal is the one at 128 MB).
const OverheadGoal = 1.2

// OverheadOptions bounds a run of warm-up and measured turns.
type OverheadOptions struct {
	N, Warmup int
	Cap       time.Duration
}

// OverheadResult compares POST /v1/allocations through the local stack
// with a direct call to the same stand-in. Failures are the calls that
// were not a fresh 201 / a direct 200. Abs is the overhead at p50, E2E −
// Direct; the goal holds for an upstream answering in BreakEven or more.
// FunctionWork and Hops say where the p50 goes, from the billed-duration
// run (Report.derive): the function's own work on top of the upstream
// call, and the HTTP API and Runtime API hops.
type OverheadResult struct {
	Delay              time.Duration
	E2E, Direct        Summary
	RatioP50, RatioP99 float64
	Met                bool // RatioP50 ≤ OverheadGoal
	Failures           Counts
	Abs, BreakEven     time.Duration
	FunctionWork, Hops time.Duration
}

// MeasureOverhead alternates one fresh allocation through the stack with
// one direct call, so drift on the machine hits both series alike.
func MeasureOverhead(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer) (OverheadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	client := newAPIClient(s.APIURL, 4)
	res := OverheadResult{Delay: s.StandIn.Delay, Failures: Counts{}}
	run := runID()
	var e2e, direct []time.Duration
	for i := 0; i < o.Warmup+o.N && ctx.Err() == nil; i++ {
		id := fmt.Sprintf("ovh-%s-%d", run, i)
		r := postAllocation(ctx, client, id, RegionOK)
		d, derr := s.StandIn.Direct(ctx, RegionOK, id+"-direct")
		if i < o.Warmup {
			continue
		}
		if r.Status == http.StatusCreated && r.server() != "" {
			e2e = append(e2e, r.Took)
		} else {
			res.Failures["stack: "+r.Outcome()]++
		}
		direct = res.Failures.keep(direct, d, derr, "direct: ")
	}
	if len(e2e) == 0 || len(direct) == 0 {
		return res, fmt.Errorf("overhead: no successful calls (%s); see %s", res.Failures, s.LogPath())
	}
	res.E2E, res.Direct = Summarize(e2e), Summarize(direct)
	res.RatioP50, res.RatioP99 = durRatio(res.E2E.P50, res.Direct.P50), durRatio(res.E2E.P99, res.Direct.P99)
	res.Met = res.RatioP50 <= OverheadGoal
	res.Abs = res.E2E.P50 - res.Direct.P50
	res.BreakEven = time.Duration(float64(res.Abs) / (OverheadGoal - 1))
	progress(log, "overhead: stack p50 %s p99 %s, direct p50 %s p99 %s (n=%d)",
		fmtMs(res.E2E.P50), fmtMs(res.E2E.P99), fmtMs(res.Direct.P50), fmtMs(res.Direct.P99), res.E2E.N)
	return res, nil
}
