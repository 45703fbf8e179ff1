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

// FallbackGoal is the goal for the extra cost of a fallback.
const FallbackGoal = 5 * time.Millisecond

// FallbackResult isolates what a fast-failing primary costs beyond the two
// upstream round trips: Extra = Fallback.P50 − PrimaryOK.P50 −
// Direct503.P50, and PairedExtra the median of the same difference per
// interleaved triple, which cancels slow drift on the machine.
type FallbackResult struct {
	PrimaryOK, Fallback, Direct503 Summary
	Extra, PairedExtra             time.Duration
	Met                            bool // Extra ≤ FallbackGoal
	Failures                       Counts
}

// MeasureFallback interleaves three calls: a fresh allocation whose primary
// answers (RegionOK), a fresh allocation whose primary answers 503 at once
// and whose fallback answers after the delay (RegionDown → RegionFallback),
// and the 503 round trip straight to the stand-in.
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

// isFallback: the answer came from the fallback region after the primary's 503.
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
