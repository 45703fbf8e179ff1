package metrics

import (
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Allocations turns allocation outcomes into metrics.
type Allocations struct{ EMF *EMF }

var _ allocation.Metrics = Allocations{}

// Allocated records one finished allocation (or its failure). Region
// dimensions go through RegionLabel, so a caller's invented region names
// never become dimensions.
func (a Allocations) Allocated(o allocation.Outcome) {
	rec := o.Record
	outcome := string(rec.State)
	if rec.Failure != nil {
		outcome = string(rec.Failure.Code)
	}
	fallback := 0.0
	if rec.FallbackUsed {
		fallback = 1
	}
	failed, noCapacity := 0.0, 0.0
	region := "none" // a failure has no region; its attempts are in UpstreamLatency
	if rec.State == gameinstance.StateFailed {
		failed = 1
	} else {
		region = o.RegionLabel(rec.Region)
	}
	if rec.Failure != nil && rec.Failure.Code == gameinstance.CodeNoCapacity {
		noCapacity = 1
	}
	// RoomPlacements: by region, its Sum counts the sessions placed in a
	// free room and its Average is their share of the allocations.
	room := 0.0
	if rec.Placement == gameinstance.PlacementRoom {
		room = 1
	}
	// One line for the allocation's own metrics: the 0/1 metrics' Average
	// is a rate (the alarms use it), their Sum a count.
	latency := Metric{"AllocationLatency", float64(o.Duration.Milliseconds()), "Milliseconds"}
	// The attempt that placed the instance, in the line's region, goes on
	// the same line (its metric by Region alone): one line fewer to write
	// and to ingest for nearly every allocation.
	placed := -1
	if last := len(rec.Attempts) - 1; last >= 0 && region != "none" && o.RegionLabel(rec.Attempts[last].Region) == region {
		placed = last
	}
	groups := []Group{
		{DimensionSets: [][]string{{"Outcome"}, {"Outcome", "Region"}}, Metrics: []Metric{{"Allocations", 1, "Count"}}},
		{DimensionSets: [][]string{nil, {"Region"}}, Metrics: []Metric{latency, {"RoomPlacements", room, "Count"}}},
		{DimensionSets: [][]string{nil}, Metrics: []Metric{
			{"AllocationFailed", failed, "Count"},
			{"NoCapacity", noCapacity, "Count"},
			{"FallbacksUsed", fallback, "Count"},
			{"AttemptsPerAllocation", float64(len(rec.Attempts)), "Count"},
			{"RegionsSkippedUnhealthy", float64(o.SkippedUnhealthy), "Count"},
			{"SuspectedOrphans", float64(len(o.SuspectedOrphans)), "Count"}}}}
	if placed >= 0 {
		if m, ok := attemptLatency(rec.Attempts[placed]); ok {
			groups = append(groups, Group{DimensionSets: [][]string{{"Region"}}, Metrics: []Metric{m}})
		}
	}
	a.EMF.EmitGroups(map[string]string{"Outcome": outcome, "Region": region}, groups...)
	orphans := map[string]int{}
	for _, region := range o.SuspectedOrphans {
		orphans[o.RegionLabel(region)]++
	}
	for region, n := range orphans {
		a.EMF.Emit(map[string]string{"Region": region}, Metric{"SuspectedOrphans", float64(n), "Count"})
	}
	for i, at := range rec.Attempts {
		if m, ok := attemptLatency(at); ok && i != placed {
			a.EMF.Emit(map[string]string{"Region": o.RegionLabel(at.Region)}, m)
		}
	}
}

// attemptLatency is an attempt's latency metric: GameFabric's Allocator's,
// or a game server's session callback's; none for an attempt never made.
func attemptLatency(at gameinstance.Attempt) (Metric, bool) {
	name := "UpstreamLatency"
	if at.Placement == gameinstance.PlacementRoom {
		name = "RoomCallbackLatency"
	}
	return Metric{name, float64(at.DurationMs), "Milliseconds"}, at.Status != 0 || at.DurationMs > 0
}
