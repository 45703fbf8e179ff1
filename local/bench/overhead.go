package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

// OverheadGoal is issue 25's goal for stack p50 ÷ direct p50 on a full core.
const OverheadGoal = 1.2

// OverheadOptions bounds a run of warm-up and measured turns.
type OverheadOptions struct {
	N, Warmup int
	Cap       time.Duration
}

// OverheadResult compares allocations through the stack with direct calls
// to the stand-in; derive splits the p50 (FunctionWork, Hops).
type OverheadResult struct {
	Delay              time.Duration
	E2E, Direct        Summary
	RatioP50, RatioP99 float64
	Met                bool // RatioP50 ≤ OverheadGoal
	Failures           Counts
	Abs, BreakEven     time.Duration
	FunctionWork, Hops time.Duration
}

// MeasureOverhead alternates an allocation through the stack with a direct
// call, so drift on the machine hits both series alike.
func MeasureOverhead(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer) (OverheadResult, error) {
	return measureOverhead(ctx, s, o, log, "overhead", RegionOK, func(ctx context.Context, id string) (time.Duration, error) {
		return s.StandIn.Direct(ctx, RegionOK, id)
	})
}

// measureOverhead alternates an allocation in region through the stack
// with direct, the same upstream call made straight; name heads the
// progress line and the errors.
func measureOverhead(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer, name, region string,
	direct func(ctx context.Context, gameInstanceID string) (time.Duration, error)) (OverheadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	client := newAPIClient(s.APIURL, 4)
	res := OverheadResult{Delay: s.StandIn.Delay, Failures: Counts{}}
	run := runID()
	var e2e, straight []time.Duration
	for i := 0; i < o.Warmup+o.N && ctx.Err() == nil; i++ {
		id := fmt.Sprintf("ovh-%s-%d", run, i)
		r := postAllocation(ctx, client, id, region)
		d, derr := direct(ctx, id+"-direct")
		if i < o.Warmup {
			continue
		}
		if r.Status == http.StatusCreated && r.server() != "" {
			e2e = append(e2e, r.Took)
		} else {
			res.Failures["stack: "+r.Outcome()]++
		}
		straight = res.Failures.keep(straight, d, derr, "direct: ")
	}
	if len(e2e) == 0 || len(straight) == 0 {
		return res, fmt.Errorf("%s: no successful calls (%s); see %s", name, res.Failures, s.LogPath())
	}
	res.E2E, res.Direct = Summarize(e2e), Summarize(straight)
	res.RatioP50, res.RatioP99 = durRatio(res.E2E.P50, res.Direct.P50), durRatio(res.E2E.P99, res.Direct.P99)
	res.Met = res.RatioP50 <= OverheadGoal
	res.Abs = res.E2E.P50 - res.Direct.P50
	res.BreakEven = time.Duration(float64(res.Abs) / (OverheadGoal - 1))
	progress(log, "%s: stack p50 %s p99 %s, direct p50 %s p99 %s (n=%d)", name,
		fmtMs(res.E2E.P50), fmtMs(res.E2E.P99), fmtMs(res.Direct.P50), fmtMs(res.Direct.P99), res.E2E.N)
	return res, nil
}

const FallbackGoal = 5 * time.Millisecond

// FallbackResult is what a fast-failing primary costs beyond the two
// round trips; PairedExtra, per interleaved triple, cancels drift.
type FallbackResult struct {
	PrimaryOK, Fallback, Direct503 Summary
	Extra, PairedExtra             time.Duration
	Met                            bool // Extra ≤ FallbackGoal
	Failures                       Counts
}

// MeasureFallback interleaves an allocation whose primary answers, one
// whose primary answers 503 at once (RegionDown → RegionFallback), and the
// 503 straight from the stand-in.
func MeasureFallback(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer) (FallbackResult, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	client := newAPIClient(s.APIURL, 4)
	res := FallbackResult{Failures: Counts{}}
	run := runID()
	var ok, fb, rtt, paired []time.Duration
	for i := 0; i < o.Warmup+o.N && ctx.Err() == nil; i++ {
		id := fmt.Sprintf("fb-%s-%d", run, i)
		a := postAllocation(ctx, client, id+"-ok", RegionOK)
		b := postAllocation(ctx, client, id+"-fb", RegionDown)
		d, derr := s.StandIn.Direct(ctx, RegionDown, id+"-direct")
		if i < o.Warmup {
			continue
		}
		good := true
		if a.Status != http.StatusCreated || a.Err != nil {
			res.Failures["primary ok: "+a.Outcome()]++
			good = false
		}
		if b.Status != http.StatusCreated || b.Err != nil || !isFallback(b.Body) {
			res.Failures["fallback: "+b.Outcome()+describeAttempts(b.Body)]++
			good = false
		}
		var gf *gamefabric.Error
		if !errors.As(derr, &gf) || gf.Status != http.StatusServiceUnavailable {
			res.Failures[fmt.Sprintf("direct 503: %v", derr)]++
			good = false
		}
		if good {
			ok, fb, rtt = append(ok, a.Took), append(fb, b.Took), append(rtt, d)
			paired = append(paired, b.Took-a.Took-d)
		}
	}
	if len(ok) == 0 {
		return res, fmt.Errorf("fallback: no complete measurement (%s); see %s", res.Failures, s.LogPath())
	}
	res.PrimaryOK, res.Fallback, res.Direct503 = Summarize(ok), Summarize(fb), Summarize(rtt)
	res.Extra = res.Fallback.P50 - res.PrimaryOK.P50 - res.Direct503.P50
	res.PairedExtra = Summarize(paired).P50 // may be negative
	res.Met = res.Extra <= FallbackGoal
	progress(log, "fallback: primary ok p50 %s, with fallback p50 %s, 503 round trip p50 %s → extra %s (paired %s, n=%d)",
		fmtMs(res.PrimaryOK.P50), fmtMs(res.Fallback.P50), fmtMs(res.Direct503.P50), fmtMs(res.Extra), fmtMs(res.PairedExtra), len(ok))
	return res, nil
}

func isFallback(b *allocclient.Allocation) bool {
	return b != nil && b.FallbackUsed && b.Region == RegionFallback && len(b.Attempts) == 2 &&
		b.Attempts[0].Region == RegionDown && b.Attempts[0].Status == http.StatusServiceUnavailable
}

func describeAttempts(b *allocclient.Allocation) string {
	s := ""
	if b != nil && len(b.Attempts) > 0 {
		s = " attempts"
		for _, a := range b.Attempts {
			s += fmt.Sprintf(" %s:%d", a.Region, a.Status)
		}
	}
	return s
}
