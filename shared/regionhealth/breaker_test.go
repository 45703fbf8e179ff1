package regionhealth

import (
	"context"
	"testing"
	"time"
)

type fakeStore struct {
	health   map[string]Health
	gets     int
	probeWin bool
	writes   []string
}

func (f *fakeStore) Get(_ context.Context, regions []string) (map[string]Health, error) {
	f.gets++
	out := map[string]Health{}
	for _, r := range regions {
		h, ok := f.health[r]
		if !ok {
			h = Health{Region: r, State: RegionInitialized}
		}
		out[r] = h
	}
	return out, nil
}
func (f *fakeStore) List(context.Context) ([]Health, error) { return nil, nil }
func (f *fakeStore) RecordSuccess(_ context.Context, r string, _ time.Time) error {
	f.writes = append(f.writes, "success:"+r)
	return nil
}
func (f *fakeStore) RecordFailure(_ context.Context, r, reason string, _ time.Time) (Health, error) {
	f.writes = append(f.writes, "failure:"+r+":"+reason)
	return Health{Region: r}, nil
}
func (f *fakeStore) ClaimProbe(context.Context, string, time.Time) (bool, error) {
	return f.probeWin, nil
}
func (f *fakeStore) RecordPing(context.Context, []string, []string, time.Time) error {
	return nil
}

func TestBreaker(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	store := &fakeStore{health: map[string]Health{
		"open":      {Region: "open", State: RegionUnhealthy, OpenUntil: now.Add(time.Minute)},
		"halfopen":  {Region: "halfopen", State: RegionUnhealthy, OpenUntil: now.Add(-time.Second)},
		"healthy":   {Region: "healthy", State: RegionDeployed, FirstSeenAt: now.Add(-time.Hour)},
		"recovered": {Region: "recovered", State: RegionDeployed, ConsecutiveFailures: 1},
	}}
	b := &Breaker{Store: store, Policy: DefaultBreakerPolicy, Now: func() time.Time { return now }}
	ctx := context.Background()
	regions := []string{"open", "halfopen", "healthy", "new"}

	store.probeWin = true
	v := b.Admit(ctx, regions)
	if v[0].Try || !v[1].Try || v[1].Reason == "" || !v[2].Try || !v[3].Try {
		t.Fatalf("verdicts = %+v", v)
	}
	// Only a region with a health record is known: "new" has none.
	if !v[2].Known || v[3].Known {
		t.Fatalf("known = %v %v, want the stored region known and the new one not", v[2].Known, v[3].Known)
	}
	store.probeWin = false
	if v := b.Admit(ctx, regions); v[1].Try {
		t.Fatalf("a lost probe claim must skip: %+v", v[1])
	}
	if store.gets != 1 {
		t.Fatalf("%d health reads within the cache TTL, want 1", store.gets)
	}
	now = now.Add(6 * time.Second)
	b.Admit(ctx, regions)
	if store.gets != 2 {
		t.Fatalf("%d health reads after the TTL, want 2", store.gets)
	}

	b.Admit(ctx, []string{"healthy", "recovered"})
	b.Observe(ctx, "healthy", true)   // already Deployed, no failures: no write
	b.Observe(ctx, "recovered", true) // resets its failure count
	b.Observe(ctx, "open", false)
	b.LinkTimedOut(ctx, "new")
	want := []string{"success:recovered", "failure:open:AllocationFailures", "failure:new:LinkTimeouts"}
	if len(store.writes) != len(want) {
		t.Fatalf("writes = %v, want %v", store.writes, want)
	}
	for i := range want {
		if store.writes[i] != want[i] {
			t.Fatalf("writes = %v, want %v", store.writes, want)
		}
	}
}
