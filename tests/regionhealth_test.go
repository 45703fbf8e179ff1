//go:build integration

package tests

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store/regiontable"
)

// The store takes the time from its callers, so these tests drive a fixed
// clock instead of sleeping through cooldowns.
var rhT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newRegionHealth(t *testing.T) *regiontable.Table {
	t.Helper()
	return regiontable.New(stack.ddb, newTables(t)["RegionHealthTable"], regionhealth.DefaultBreakerPolicy)
}

func getHealth(t *testing.T, s *regiontable.Table, region string) regionhealth.Health {
	t.Helper()
	got, err := s.Get(context.Background(), []string{region})
	if err != nil {
		t.Fatalf("get %s: %v", region, err)
	}
	return got[region]
}

func recordFailure(t *testing.T, s *regiontable.Table, region string, now time.Time) regionhealth.Health {
	t.Helper()
	h, err := s.RecordFailure(context.Background(), region, regionhealth.BecauseAllocationFailures, now)
	if err != nil {
		t.Fatalf("record failure %s: %v", region, err)
	}
	return h
}

func recordSuccess(t *testing.T, s *regiontable.Table, region string, now time.Time) {
	t.Helper()
	if err := s.RecordSuccess(context.Background(), region, now); err != nil {
		t.Fatalf("record success %s: %v", region, err)
	}
}

func claimProbe(t *testing.T, s *regiontable.Table, region string, now time.Time) bool {
	t.Helper()
	won, err := s.ClaimProbe(context.Background(), region, now)
	if err != nil {
		t.Fatalf("claim probe %s: %v", region, err)
	}
	return won
}

func recordPing(t *testing.T, s *regiontable.Table, withTargets, known []string, now time.Time) {
	t.Helper()
	if err := s.RecordPing(context.Background(), withTargets, known, now); err != nil {
		t.Fatalf("record ping: %v", err)
	}
}

func TestRegionHealthGetUnknownRegions(t *testing.T) {
	s := newRegionHealth(t)
	got, err := s.Get(context.Background(), []string{"us-west", "eu-central-1", "us-west"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]regionhealth.Health{
		"us-west":      {Region: "us-west", State: regionhealth.RegionInitialized},
		"eu-central-1": {Region: "eu-central-1", State: regionhealth.RegionInitialized},
	}
	if len(got) != len(want) {
		t.Fatalf("Get = %+v, want %+v", got, want)
	}
	for r, w := range want {
		if got[r] != w {
			t.Errorf("%s = %+v, want %+v", r, got[r], w)
		}
	}
	if d, _ := regionhealth.DefaultBreakerPolicy.Decide(got["us-west"], rhT0); d != regionhealth.Try {
		t.Errorf("Decide(unknown) = %v, want Try", d)
	}
	if all, err := s.List(context.Background()); err != nil || len(all) != 0 {
		t.Errorf("List = %+v, %v; want nothing stored", all, err)
	}
}

func TestRegionHealthSuccessKeepsSince(t *testing.T) {
	s := newRegionHealth(t)
	recordSuccess(t, s, "us-west", rhT0)
	recordSuccess(t, s, "us-west", rhT0.Add(time.Minute))
	h := getHealth(t, s, "us-west")
	if h.State != regionhealth.RegionDeployed || !h.Since.Equal(rhT0) || !h.LastSuccessAt.Equal(rhT0.Add(time.Minute)) ||
		!h.FirstSeenAt.Equal(rhT0) || h.ConsecutiveFailures != 0 {
		t.Errorf("after two successes: %+v; want Deployed since the first, last success the second", h)
	}
}

// TestRegionHealthFailureThreshold: below the threshold the state stays;
// the third consecutive failure opens the breaker; a success in between
// resets the count.
func TestRegionHealthFailureThreshold(t *testing.T) {
	p := regionhealth.DefaultBreakerPolicy
	tests := []struct {
		name      string
		deployed  bool // a success before the failures
		reason    string
		wantState regionhealth.RegionState // after two failures
	}{
		{"Initialized", false, regionhealth.BecauseAllocationFailures, regionhealth.RegionInitialized},
		{"Deployed", true, regionhealth.BecauseAllocationFailures, regionhealth.RegionDeployed},
		{"link timeouts", true, regionhealth.BecauseLinkTimeouts, regionhealth.RegionDeployed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRegionHealth(t)
			ctx := context.Background()
			if tt.deployed {
				recordSuccess(t, s, "r", rhT0)
			}
			for i := 1; i <= 2; i++ {
				h, err := s.RecordFailure(ctx, "r", tt.reason, rhT0.Add(time.Duration(i)*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				if h.State != tt.wantState || h.ConsecutiveFailures != i || !h.OpenUntil.IsZero() {
					t.Fatalf("failure %d: %+v, want %s with %d failures", i, h, tt.wantState, i)
				}
				if d, _ := p.Decide(h, rhT0.Add(time.Duration(i)*time.Second)); d != regionhealth.Try {
					t.Fatalf("failure %d: Decide = %v, want Try", i, d)
				}
			}
			third := rhT0.Add(3 * time.Second)
			h, err := s.RecordFailure(ctx, "r", tt.reason, third)
			if err != nil {
				t.Fatal(err)
			}
			want := regionhealth.Health{Region: "r", State: regionhealth.RegionUnhealthy, Since: third, ConsecutiveFailures: 3,
				OpenUntil: third.Add(p.Cooldown), FirstSeenAt: h.FirstSeenAt, LastSuccessAt: h.LastSuccessAt, Reason: tt.reason}
			if h != want {
				t.Fatalf("third failure:\n got %+v\nwant %+v", h, want)
			}
			if stored := getHealth(t, s, "r"); stored != want {
				t.Errorf("stored:\n got %+v\nwant %+v", stored, want)
			}
			if d, reason := p.Decide(h, third.Add(time.Second)); d != regionhealth.Skip || reason != "unhealthy: circuit open until 2030-01-02T03:05:08Z" {
				t.Errorf("Decide = %v %q, want Skip until the cooldown ends", d, reason)
			}
		})
	}

	t.Run("a success resets the count", func(t *testing.T) {
		s := newRegionHealth(t)
		recordFailure(t, s, "r", rhT0)
		recordFailure(t, s, "r", rhT0.Add(time.Second))
		recordSuccess(t, s, "r", rhT0.Add(2*time.Second))
		h := recordFailure(t, s, "r", rhT0.Add(3*time.Second))
		if h.State != regionhealth.RegionDeployed || h.ConsecutiveFailures != 1 {
			t.Errorf("after fail, fail, success, fail: %+v; want Deployed with 1 failure", h)
		}
	})
}

// TestRegionHealthConcurrentFailures: 20 Lambdas failing at once lose no
// count, and exactly one of them opens the breaker.
func TestRegionHealthConcurrentFailures(t *testing.T) {
	s := newRegionHealth(t)
	recordSuccess(t, s, "us-west", rhT0)
	const n = 20
	results := make([]regionhealth.Health, n)
	nows := make([]time.Time, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		// A distinct time per caller shows whose write set Since.
		nows[i] = rhT0.Add(time.Second + time.Duration(i)*time.Millisecond)
		wg.Go(func() {
			results[i], errs[i] = s.RecordFailure(context.Background(), "us-west", regionhealth.BecauseAllocationFailures, nows[i])
		})
	}
	wg.Wait()
	opened := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if results[i].State == regionhealth.RegionUnhealthy && results[i].Since.Equal(nows[i]) {
			if opened >= 0 {
				t.Errorf("callers %d and %d both opened the breaker", opened, i)
			}
			opened = i
		}
	}
	if opened < 0 {
		t.Fatal("no caller opened the breaker")
	}
	h := getHealth(t, s, "us-west")
	if h.ConsecutiveFailures != n {
		t.Errorf("consecutiveFailures = %d, want %d", h.ConsecutiveFailures, n)
	}
	if h.State != regionhealth.RegionUnhealthy || !h.Since.Equal(nows[opened]) || !h.OpenUntil.Equal(nows[opened].Add(regionhealth.DefaultBreakerPolicy.Cooldown)) {
		t.Errorf("stored %+v; want Unhealthy since %s (caller %d), open for one cooldown", h, nows[opened], opened)
	}
}

// openBreaker makes region Unhealthy at rhT0 and returns when its cooldown ends.
func openBreaker(t *testing.T, s *regiontable.Table, region string) time.Time {
	t.Helper()
	var h regionhealth.Health
	for range regionhealth.DefaultBreakerPolicy.FailureThreshold {
		h = recordFailure(t, s, region, rhT0)
	}
	if h.State != regionhealth.RegionUnhealthy {
		t.Fatalf("breaker did not open: %+v", h)
	}
	return h.OpenUntil
}

func TestRegionHealthProbe(t *testing.T) {
	p := regionhealth.DefaultBreakerPolicy
	s := newRegionHealth(t)

	t.Run("one of concurrent claims wins, only after the cooldown", func(t *testing.T) {
		cooldownEnd := openBreaker(t, s, "claims")
		if claimProbe(t, s, "claims", cooldownEnd.Add(-time.Millisecond)) {
			t.Fatal("claimed a probe while the breaker was open")
		}
		if d, _ := p.Decide(getHealth(t, s, "claims"), cooldownEnd); d != regionhealth.Probe {
			t.Fatalf("Decide at the end of the cooldown = %v, want Probe", d)
		}
		const n = 10
		won := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { won[i], errs[i] = s.ClaimProbe(context.Background(), "claims", cooldownEnd) })
		}
		wg.Wait()
		winners := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if won[i] {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("%d callers won the probe, want exactly 1", winners)
		}
		h := getHealth(t, s, "claims")
		if !h.ProbeUntil.Equal(cooldownEnd.Add(p.ProbeLease)) {
			t.Errorf("ProbeUntil = %s, want %s", h.ProbeUntil, cooldownEnd.Add(p.ProbeLease))
		}
		if d, reason := p.Decide(h, cooldownEnd.Add(time.Second)); d != regionhealth.Skip || reason != "unhealthy: another request is probing it" {
			t.Errorf("Decide during the probe = %v %q", d, reason)
		}
		// A probe that never reports back frees the region after its lease.
		if claimProbe(t, s, "claims", h.ProbeUntil.Add(-time.Millisecond)) {
			t.Error("claimed a probe while another held it")
		}
		if !claimProbe(t, s, "claims", h.ProbeUntil) {
			t.Error("could not claim the probe after the lease expired")
		}
	})

	t.Run("a successful probe closes the breaker", func(t *testing.T) {
		cooldownEnd := openBreaker(t, s, "recovers")
		if !claimProbe(t, s, "recovers", cooldownEnd) {
			t.Fatal("probe not claimed")
		}
		recordSuccess(t, s, "recovers", cooldownEnd.Add(time.Second))
		h := getHealth(t, s, "recovers")
		want := regionhealth.Health{Region: "recovers", State: regionhealth.RegionDeployed, Since: cooldownEnd.Add(time.Second),
			LastSuccessAt: cooldownEnd.Add(time.Second), FirstSeenAt: rhT0}
		if h != want {
			t.Errorf("after the probe's success:\n got %+v\nwant %+v", h, want)
		}
		if d, _ := p.Decide(h, cooldownEnd.Add(time.Second)); d != regionhealth.Try {
			t.Errorf("Decide = %v, want Try", d)
		}
	})

	t.Run("a failed probe re-opens the breaker", func(t *testing.T) {
		cooldownEnd := openBreaker(t, s, "still-down")
		if !claimProbe(t, s, "still-down", cooldownEnd) {
			t.Fatal("probe not claimed")
		}
		failedAt := cooldownEnd.Add(5 * time.Second)
		h := recordFailure(t, s, "still-down", failedAt)
		want := regionhealth.Health{Region: "still-down", State: regionhealth.RegionUnhealthy, Since: rhT0, ConsecutiveFailures: 4,
			OpenUntil: failedAt.Add(p.Cooldown), FirstSeenAt: rhT0, Reason: regionhealth.BecauseAllocationFailures}
		if h != want {
			t.Fatalf("after the failed probe:\n got %+v\nwant %+v", h, want)
		}
		if d, _ := p.Decide(h, failedAt.Add(time.Second)); d != regionhealth.Skip {
			t.Errorf("Decide = %v, want Skip", d)
		}
		if claimProbe(t, s, "still-down", failedAt.Add(time.Second)) {
			t.Error("claimed a probe during the new cooldown")
		}
		if !claimProbe(t, s, "still-down", h.OpenUntil) {
			t.Error("could not claim a probe after the new cooldown")
		}
	})
}

func TestRegionHealthPing(t *testing.T) {
	p := regionhealth.DefaultBreakerPolicy // NoPingUnhealthyAfter 5m
	type ping struct {
		at          time.Duration // after rhT0
		withTargets bool
	}
	tests := []struct {
		name       string
		before     func(t *testing.T, s *regiontable.Table) // at rhT0
		pings      []ping
		wantState  regionhealth.RegionState
		wantReason string
	}{
		{"targets: Initialized becomes Deployed", nil,
			[]ping{{0, true}}, regionhealth.RegionDeployed, ""},
		{"no targets for less than the limit", nil,
			[]ping{{0, true}, {4 * time.Minute, false}, {5 * time.Minute, false}}, regionhealth.RegionDeployed, ""},
		{"no targets for longer than the limit", nil,
			[]ping{{0, true}, {4 * time.Minute, false}, {6 * time.Minute, false}}, regionhealth.RegionUnhealthy, regionhealth.BecauseNoPingTargets},
		{"never any targets: counted from the first record", nil,
			[]ping{{0, false}, {3 * time.Minute, false}, {6 * time.Minute, false}}, regionhealth.RegionUnhealthy, regionhealth.BecauseNoPingTargets},
		{"never any targets, not long enough", nil,
			[]ping{{0, false}, {4 * time.Minute, false}}, regionhealth.RegionInitialized, ""},
		{"targets come back", nil,
			[]ping{{0, false}, {6 * time.Minute, false}, {7 * time.Minute, true}}, regionhealth.RegionDeployed, ""},
		{"a recent success keeps it Deployed", func(t *testing.T, s *regiontable.Table) { recordSuccess(t, s, "r", rhT0.Add(3*time.Minute)) },
			[]ping{{0, true}, {6 * time.Minute, false}}, regionhealth.RegionDeployed, ""},
		{"targets do not close a breaker opened by failures", func(t *testing.T, s *regiontable.Table) { openBreaker(t, s, "r") },
			[]ping{{time.Second, true}}, regionhealth.RegionUnhealthy, regionhealth.BecauseAllocationFailures},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRegionHealth(t)
			if tt.before != nil {
				tt.before(t, s)
			}
			var last time.Time
			for _, pg := range tt.pings {
				last = rhT0.Add(pg.at)
				var with []string
				if pg.withTargets {
					with = []string{"r"}
				}
				recordPing(t, s, with, []string{"r", "other"}, last)
			}
			h := getHealth(t, s, "r")
			if h.State != tt.wantState || h.Reason != tt.wantReason {
				t.Fatalf("got %+v, want %s %q", h, tt.wantState, tt.wantReason)
			}
			switch {
			case tt.wantReason == regionhealth.BecauseNoPingTargets:
				if !h.Since.Equal(last) || !h.OpenUntil.Equal(last.Add(p.Cooldown)) || h.ConsecutiveFailures != 0 {
					t.Errorf("got %+v; want Unhealthy since the last ping, open one cooldown, no failures counted", h)
				}
			case tt.wantState == regionhealth.RegionDeployed:
				if !h.OpenUntil.IsZero() || !h.ProbeUntil.IsZero() {
					t.Errorf("Deployed with breaker fields left: %+v", h)
				}
			}
		})
	}
}

func TestRegionHealthList(t *testing.T) {
	s := newRegionHealth(t)
	recordSuccess(t, s, "a", rhT0)
	recordFailure(t, s, "b", rhT0)
	recordPing(t, s, nil, []string{"c"}, rhT0)
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]regionhealth.RegionState{}
	for _, h := range all {
		got[h.Region] = h.State
	}
	want := map[string]regionhealth.RegionState{"a": regionhealth.RegionDeployed, "b": regionhealth.RegionInitialized, "c": regionhealth.RegionInitialized}
	if len(got) != len(want) || got["a"] != want["a"] || got["b"] != want["b"] || got["c"] != want["c"] {
		t.Errorf("List = %v, want %v", got, want)
	}
}
