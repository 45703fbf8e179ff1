package allocation

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// PlayerLatency is one player's measured latency per region, from the
// clients' pings against the ping targets (GET /v1/regions).
type PlayerLatency = apishape.PlayerLatency

// RankedRegion is a region's standing among the players' measurements.
type RankedRegion struct {
	Region  string
	Players int     // how many players reported it
	AvgMs   float64 // their average latency
	MaxMs   float64 // the worst of them
}

func (r RankedRegion) String() string {
	return fmt.Sprintf("%d players, avg %.0f ms, max %.0f ms", r.Players, r.AvgMs, r.MaxMs)
}

// normalizeRegion is how latency keys and requested regions are compared.
// Nitrado's own matchmaking integration strips a "custom-" prefix.
func normalizeRegion(r string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(r)), "custom-")
}

// RankRegions orders the regions the players reported: regions where any
// player exceeds maxMs (when maxMs > 0) are dropped; the region reported by
// the most players wins, ties by lowest average, then lowest maximum, then
// name. If every region is dropped, the unfiltered ranking is returned with
// relaxed = true, so a match is never refused for latency alone.
func RankRegions(players []PlayerLatency, maxMs float64) (ranked []RankedRegion, relaxed bool) {
	stats := map[string]*RankedRegion{}
	sums := map[string]float64{}
	for _, p := range players {
		for region, ms := range p.LatencyMs {
			region = normalizeRegion(region)
			s, ok := stats[region]
			if !ok {
				s = &RankedRegion{Region: region}
				stats[region] = s
			}
			s.Players++
			sums[region] += ms
			s.MaxMs = max(s.MaxMs, ms)
		}
	}
	all := make([]RankedRegion, 0, len(stats))
	for region, s := range stats {
		s.AvgMs = sums[region] / float64(s.Players)
		all = append(all, *s)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.Players != b.Players:
			return a.Players > b.Players
		case a.AvgMs != b.AvgMs:
			return a.AvgMs < b.AvgMs
		case a.MaxMs != b.MaxMs:
			return a.MaxMs < b.MaxMs
		}
		return a.Region < b.Region
	})
	if maxMs <= 0 {
		return all, false
	}
	for _, r := range all {
		if r.MaxMs <= maxMs {
			ranked = append(ranked, r)
		}
	}
	if len(ranked) == 0 && len(all) > 0 {
		return all, true
	}
	return ranked, false
}

// PlanStep is one region of the attempt plan and why it is there.
type PlanStep struct {
	Region string
	Reason string // "requested", "preferred #2", "latency #1 (...)", "fallback"
}

// BuildPlan is the attempt order: the explicit preferences, or else the
// latency ranking, then the fallback region; no duplicates, at most max.
func BuildPlan(preferred []string, ranked []RankedRegion, fallback string, maxRegions int) []PlanStep {
	var plan []PlanStep
	seen := map[string]bool{}
	add := func(region, reason string) {
		if region == "" || seen[region] || len(plan) >= maxRegions {
			return
		}
		seen[region] = true
		plan = append(plan, PlanStep{Region: region, Reason: reason})
	}
	switch {
	case len(preferred) == 1:
		add(preferred[0], "requested")
	case len(preferred) > 1:
		for i, r := range preferred {
			add(r, fmt.Sprintf("preferred #%d", i+1))
		}
	default:
		for i, r := range ranked {
			add(r.Region, fmt.Sprintf("latency #%d (%s)", i+1, r))
		}
	}
	add(normalizeRegion(fallback), "fallback")
	return plan
}
