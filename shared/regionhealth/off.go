package regionhealth

import (
	"context"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Regions is region health as the functions use it: the Breaker on
// DynamoDB, or Off.
type Regions interface {
	// Admit decides for each region, in order, whether to try it now
	// (allocation.RegionHealth).
	Admit(ctx context.Context, regions []string) []region.Verdict
	// Observe records an attempt's outcome for the region.
	Observe(ctx context.Context, region string, ok bool)
	LinkTimedOut(ctx context.Context, region string)
	RecordPing(ctx context.Context, regionsWithTargets, knownRegions []string, now time.Time) error
}

var (
	_ Regions = (*Breaker)(nil)
	_ Regions = Off{}
)

// Off is region health switched off (no REGION_HEALTH_TABLE): every region
// is tried and nothing is recorded.
type Off struct{}

// Admit tries every region; none is known, so none names a metric.
func (Off) Admit(_ context.Context, regions []string) []region.Verdict {
	out := make([]region.Verdict, len(regions))
	for i := range out {
		out[i].Try = true
	}
	return out
}

func (Off) Observe(context.Context, string, bool)                           {}
func (Off) LinkTimedOut(context.Context, string)                            {}
func (Off) RecordPing(context.Context, []string, []string, time.Time) error { return nil }

// Off says there is no region health to record into, so an allocation
// skips even preparing its observations.
func (Off) Off() bool { return true }

// RecordPing records which regions have ping targets (see Store.RecordPing).
func (b *Breaker) RecordPing(ctx context.Context, regionsWithTargets, knownRegions []string, now time.Time) error {
	return b.Store.RecordPing(ctx, regionsWithTargets, knownRegions, now)
}

// List lists every region's health (for GET /v1/regions).
func (b *Breaker) List(ctx context.Context) ([]Health, error) { return b.Store.List(ctx) }
