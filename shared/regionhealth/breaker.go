package regionhealth

import (
	"context"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Breaker is the allocation service's view of region health: it admits
// regions through the circuit breaker and records outcomes. Reads are
// cached briefly per warm Lambda, so a steady stream of allocations does
// not pay a health read each; health is advisory, a few seconds stale is fine.
type Breaker struct {
	Store    Store
	Policy   BreakerPolicy
	CacheTTL time.Duration // default 5s
	Now      func() time.Time

	mu       sync.Mutex
	cache    map[string]Health
	cachedAt time.Time
}

func (b *Breaker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Admit decides each region; a region past its cooldown is probed by at
// most one request at a time (half-open).
func (b *Breaker) Admit(ctx context.Context, regions []string) []region.Verdict {
	now := b.now()
	health := b.read(ctx, regions, now)
	out := make([]region.Verdict, len(regions))
	for i, r := range regions {
		h := health[r]
		h.Region = r
		d, why := b.Policy.Decide(h, now)
		// A region with a health record is one GameFabric listed, that
		// allocated, or that is configured; a name a caller made up has none.
		known := !h.FirstSeenAt.IsZero()
		switch d {
		case Try:
			out[i] = region.Verdict{Try: true}
		case Probe:
			won, err := b.Store.ClaimProbe(ctx, r, now)
			if err != nil {
				logging.FromContext(ctx).Warn("claiming a region probe failed; trying it", "region", r, "error", err)
				won = true
			}
			out[i] = region.Verdict{Try: won, Reason: "half-open probe after the cooldown"}
			if !won {
				out[i].Reason = "unhealthy: another request is probing it"
			}
		default:
			out[i] = region.Verdict{Reason: why}
		}
		out[i].Known = known
	}
	return out
}

// Observe records an outcome; a success on a region known to be healthy
// writes nothing.
func (b *Breaker) Observe(ctx context.Context, region string, ok bool) {
	now := b.now()
	b.mu.Lock()
	h, known := b.cache[region]
	b.mu.Unlock()
	var err error
	switch {
	case ok && known && h.State == RegionDeployed && h.ConsecutiveFailures == 0:
		return
	case ok:
		err = b.Store.RecordSuccess(ctx, region, now)
	default:
		var got Health
		got, err = b.Store.RecordFailure(ctx, region, BecauseAllocationFailures, now)
		if err == nil && got.State == RegionUnhealthy && got.Since.Equal(now) {
			logging.FromContext(ctx).Warn("region marked Unhealthy", "region", region, "consecutiveFailures", got.ConsecutiveFailures, "openUntil", got.OpenUntil)
		}
	}
	b.forget(region)
	if err != nil {
		logging.FromContext(ctx).Warn("recording region health failed", "region", region, "ok", ok, "error", err)
	}
}

func (b *Breaker) read(ctx context.Context, regions []string, now time.Time) map[string]Health {
	ttl := b.CacheTTL
	if ttl <= 0 {
		ttl = 5 * time.Second
	}
	b.mu.Lock()
	fresh := b.cache != nil && now.Sub(b.cachedAt) < ttl
	for _, r := range regions {
		if _, ok := b.cache[r]; !ok {
			fresh = false
		}
	}
	if fresh {
		defer b.mu.Unlock()
		return copyMap(b.cache)
	}
	b.mu.Unlock()
	got, err := b.Store.Get(ctx, regions)
	if err != nil {
		// Health is advisory: without it, every region is tried.
		logging.FromContext(ctx).Warn("reading region health failed; trying every region", "error", err)
		return map[string]Health{}
	}
	b.mu.Lock()
	b.cache, b.cachedAt = got, now
	b.mu.Unlock()
	return copyMap(got)
}

func (b *Breaker) forget(region string) {
	b.mu.Lock()
	delete(b.cache, region)
	b.mu.Unlock()
}

func copyMap(m map[string]Health) map[string]Health {
	out := make(map[string]Health, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// LinkTimedOut records that a server allocated in region never linked: the
// allocation silently failed there.
func (b *Breaker) LinkTimedOut(ctx context.Context, region string) {
	if _, err := b.Store.RecordFailure(ctx, region, BecauseLinkTimeouts, b.now()); err != nil {
		logging.FromContext(ctx).Warn("recording a link timeout against the region failed", "region", region, "error", err)
	}
	b.forget(region)
}

// Unhealthy lists the regions stored Unhealthy, read from the store (not
// the cache): the UnhealthyRegions gauge is what an operator alarms on.
func (b *Breaker) Unhealthy(ctx context.Context) ([]string, error) {
	all, err := b.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range all {
		if h.EffectiveState() == RegionUnhealthy {
			out = append(out, h.Region)
		}
	}
	return out, nil
}
