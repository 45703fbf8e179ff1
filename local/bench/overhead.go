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

// OverheadOptions bounds the overhead run.
type OverheadOptions struct {
	N, Warmup int
	Cap       time.Duration
}

// OverheadResult compares POST /v1/allocations through the local stack
// with a direct call to the same stand-in.
type OverheadResult struct {
	Delay              time.Duration
	E2E, Direct        Summary
	RatioP50, RatioP99 float64
	Met                bool   // RatioP50 ≤ OverheadGoal
	Failures           Counts // calls that were not a fresh 201 / a direct 200
	// Abs is the overhead at p50, E2E − Direct; the goal holds for an
	// upstream answering in BreakEven or more.
	Abs, BreakEven time.Duration
	// Where the p50 goes, from the billed-duration run: the function's own
	// work on top of the upstream call, and the HTTP API and Runtime API hops.
	FunctionWork, Hops time.Duration
}

// MeasureOverhead alternates one fresh allocation through the stack with
// one direct call, so drift on the machine hits both series alike.
func MeasureOverhead(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer) (OverheadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	client := newAPIClient(s.APIURL, 4)
	res := OverheadResult{Delay: s.StandIn.Delay, Failures: Counts{}}
	var e2e, direct []time.Duration
	for i := range o.Warmup + o.N {
		if ctx.Err() != nil {
			break
		}
		id := fmt.Sprintf("ovh-%d-%d", time.Now().UnixNano(), i)
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
		if derr == nil {
			direct = append(direct, d)
		} else {
			res.Failures["direct: "+derr.Error()]++
		}
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

// split says where the p50 goes from the billed-duration run: the
// function's own work on top of the upstream call, and the HTTP API and
// Runtime API hops.
func (o *OverheadResult) split(b BilledResult) {
	o.FunctionWork, o.Hops = b.Duration.P50-o.Direct.P50, o.E2E.P50-b.Duration.P50
}
