package regionhealth

import (
	"context"
	"time"
)

// Store keeps the health of every region. Concurrent Lambdas share it, so
// every write is an atomic counter or a conditional write.
type Store interface {
	// Get returns the health of each region; a region never stored is
	// Initialized.
	Get(ctx context.Context, regions []string) (map[string]Health, error)
	// List returns every stored region.
	List(ctx context.Context) ([]Health, error)
	// RecordSuccess: a successful allocation makes the region Deployed and
	// closes its breaker.
	RecordSuccess(ctx context.Context, region string, now time.Time) error
	// RecordFailure counts a failed allocation or link timeout (reason) and
	// opens the breaker at the threshold, or re-opens it after a failed
	// probe. It returns the health after the write.
	RecordFailure(ctx context.Context, region, reason string, now time.Time) (Health, error)
	// ClaimProbe makes the caller the one half-open probe of an Unhealthy
	// region whose cooldown is over; false if it is not, or another caller
	// holds the probe.
	ClaimProbe(ctx context.Context, region string, now time.Time) (bool, error)
	// RecordPing applies a ping refresh: regions with targets are Deployed
	// unless the breaker made them Unhealthy, and known regions without
	// targets for NoPingUnhealthyAfter become Unhealthy (NoPingTargets).
	RecordPing(ctx context.Context, regionsWithTargets, knownRegions []string, now time.Time) error
}
