package regionhealth

import (
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// BreakerPolicy is the breaker and staleness settings, every field set
// (config.RegionHealth reads them whole).
type BreakerPolicy struct{ defaults.Breaker }

// DefaultBreakerPolicy is the documented defaults as one complete policy,
// for whoever builds a breaker without the configuration (the tests): the
// breaker never fills a field in.
var DefaultBreakerPolicy = BreakerPolicy{defaults.BreakerDefaults}

// Decision is what the breaker allows for one request.
type Decision int

const (
	// Try: the breaker is closed; use the region.
	Try Decision = iota
	// Probe: half-open; use the region only after winning Store.ClaimProbe,
	// so one request at a time tests a region that was failing.
	Probe
	// Skip: the breaker is open, or another request is probing it.
	Skip
)

func (d Decision) String() string {
	switch d {
	case Try:
		return "Try"
	case Probe:
		return "Probe"
	case Skip:
		return "Skip"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Decide is the breaker: pure, so callers pass the time. The reason is set
// for Skip, to be shown to whoever asked for the region.
func (p BreakerPolicy) Decide(h Health, now time.Time) (Decision, string) {
	if h.EffectiveState() != RegionUnhealthy {
		return Try, ""
	}
	if now.Before(h.OpenUntil) {
		return Skip, "unhealthy: circuit open until " + h.OpenUntil.UTC().Format(time.RFC3339)
	}
	if !h.ProbeUntil.IsZero() && now.Before(h.ProbeUntil) {
		return Skip, "unhealthy: another request is probing it"
	}
	return Probe, ""
}

// NoPingDue reports whether a region that the latest ping refresh listed
// without targets has gone long enough without evidence of health to become
// Unhealthy. The store's conditional write checks the same in DynamoDB.
func (p BreakerPolicy) NoPingDue(h Health, now time.Time) bool {
	if h.EffectiveState() == RegionUnhealthy {
		return false
	}
	cutoff := now.Add(-p.NoPingUnhealthyAfter)
	seen := h.LastPingTargetsAt
	if seen.IsZero() {
		seen = h.FirstSeenAt
	}
	if seen.IsZero() || !seen.Before(cutoff) {
		return false
	}
	// A recent successful allocation proves the region works even when
	// ping discovery lists nothing for it.
	return h.LastSuccessAt.IsZero() || h.LastSuccessAt.Before(cutoff)
}
