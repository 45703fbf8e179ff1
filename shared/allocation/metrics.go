package allocation

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Outcome is what the metrics port hears of one finished allocation.
type Outcome struct {
	Record           gameinstance.Record
	SkippedUnhealthy int
	// SuspectedOrphans has one region per attempt that may have left a
	// server allocated upstream.
	SuspectedOrphans []string
	// Known are the regions the deployment knows: with a region-health
	// record, FALLBACK_REGION, or where a server was allocated.
	Known map[string]bool
	// Duration is the whole allocation's, from the request to the
	// outcome stored.
	Duration time.Duration
}

// OtherRegion is the metric dimension of every region the deployment does
// not know.
const OtherRegion = "other"

// RegionLabel names region as a metric dimension: itself when Known,
// OtherRegion otherwise, so region names callers invent cannot create
// unbounded metric dimensions.
func (o Outcome) RegionLabel(region string) string {
	if o.Known[region] {
		return region
	}
	return OtherRegion
}

func (run planRun) metrics(rec gameinstance.Record, d time.Duration) Outcome {
	return Outcome{Record: rec, SkippedUnhealthy: run.skipped, SuspectedOrphans: run.orphans, Known: run.known, Duration: d}
}
