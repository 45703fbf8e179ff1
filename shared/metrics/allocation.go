package metrics

import (
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
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
	a.EMF.Emit(map[string]string{"Outcome": outcome}, Metric{"Allocations", 1, "Count"})
	a.EMF.Emit(nil,
		Metric{"FallbacksUsed", fallback, "Count"},
		Metric{"AttemptsPerAllocation", float64(len(rec.Attempts)), "Count"},
		Metric{"RegionsSkippedUnhealthy", float64(o.SkippedUnhealthy), "Count"},
		Metric{"SuspectedOrphans", float64(len(o.SuspectedOrphans)), "Count"})
	orphans := map[string]int{}
	for _, region := range o.SuspectedOrphans {
		orphans[o.RegionLabel(region)]++
	}
	for region, n := range orphans {
		a.EMF.Emit(map[string]string{"Region": region}, Metric{"SuspectedOrphans", float64(n), "Count"})
	}
	for _, at := range rec.Attempts {
		if at.Status != 0 || at.DurationMs > 0 {
			a.EMF.Emit(map[string]string{"Region": o.RegionLabel(at.Region)}, Metric{"UpstreamLatency", float64(at.DurationMs), "Milliseconds"})
		}
	}
}
