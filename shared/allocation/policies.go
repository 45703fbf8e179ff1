package allocation

import (
	"fmt"
	"math"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// LatencyPolicy caps every player's latency to a region for a while
// (GameLift's PlayerLatencyPolicy). The policies of a request apply in
// order from the first attempt; a last one without DurationSeconds holds
// until the placement's timeout, after a last one with it there is no cap.
type LatencyPolicy = apishape.LatencyPolicy

const (
	maxLatencyPolicies     = 10
	maxQueueTimeoutSeconds = 600
)

// policyProblems checks latencyPolicies; every problem names the field.
func policyProblems(req Request) []string {
	ps := req.LatencyPolicies
	if len(ps) == 0 {
		return nil
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch {
	case len(ps) > maxLatencyPolicies:
		add("latencyPolicies may list at most %d policies", maxLatencyPolicies)
	case len(req.PlayerLatencies) == 0:
		add("latencyPolicies need playerLatencies: they cap the players' latency to each region")
	case req.MaxPlayerLatencyMs != nil:
		add("give latencyPolicies or maxPlayerLatencyMs, not both")
	}
	for i, p := range ps {
		if math.IsNaN(p.MaxPlayerLatencyMs) || p.MaxPlayerLatencyMs <= 0 || p.MaxPlayerLatencyMs > MaxLatencyMs {
			add("latencyPolicies[%d].maxPlayerLatencyMs must be more than 0 and at most %d", i, MaxLatencyMs)
		}
		if i > 0 && !(p.MaxPlayerLatencyMs > ps[i-1].MaxPlayerLatencyMs) {
			add("latencyPolicies[%d].maxPlayerLatencyMs must be more than latencyPolicies[%d]'s: caps only relax", i, i-1)
		}
		switch d := p.DurationSeconds; {
		case d == nil && i < len(ps)-1:
			add("latencyPolicies[%d].durationSeconds is required: only the last policy may hold until the timeout", i)
		case d != nil && (*d < 1 || *d > maxQueueTimeoutSeconds):
			add("latencyPolicies[%d].durationSeconds must be 1-%d", i, maxQueueTimeoutSeconds)
		}
	}
	return problems
}

// capAt is the cap in force elapsed after the first attempt (0 = none)
// and how long it holds (0 = until the timeout).
func capAt(policies []LatencyPolicy, elapsed time.Duration) (latencyCap float64, holds time.Duration) {
	var start time.Duration
	for _, p := range policies {
		if p.DurationSeconds == nil {
			return p.MaxPlayerLatencyMs, 0
		}
		end := start + time.Duration(*p.DurationSeconds)*time.Second
		if elapsed < end {
			return p.MaxPlayerLatencyMs, end - elapsed
		}
		start = end
	}
	return 0, 0
}

// routes are a queued placement's region choices, re-planned at every
// attempt under the cap then in force.
type routes struct {
	preferred []string
	ranked    []RankedRegion // every region the players reported, unfiltered
	worst     map[string]float64
	fallback  string
	max       int
	policies  []LatencyPolicy
}

// at is the plan elapsed after the first attempt: the usual order
// (preferences or latency ranking, then the fallback) without the regions
// where any player is over the cap, at most max of them; the cap; and how
// long until it relaxes (0 = it does not).
func (r routes) at(elapsed time.Duration) (plan []PlanStep, latencyCap float64, relaxesIn time.Duration) {
	latencyCap, relaxesIn = capAt(r.policies, elapsed)
	for _, step := range BuildPlan(r.preferred, r.ranked, r.fallback, math.MaxInt) {
		if latencyCap > 0 && r.worst[step.Region] > latencyCap {
			continue
		}
		if len(plan) < r.max {
			plan = append(plan, step)
		}
	}
	return plan, latencyCap, relaxesIn
}
