package regionhealth

import (
	"testing"
	"time"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestDecide(t *testing.T) {
	p := DefaultBreakerPolicy
	open := t0.Add(time.Minute)
	tests := []struct {
		name       string
		h          Health
		now        time.Time
		want       Decision
		wantReason string
	}{
		{"zero value is Initialized: closed", Health{}, t0, Try, ""},
		{"Initialized: closed", Health{State: RegionInitialized, ConsecutiveFailures: 2}, t0, Try, ""},
		{"Deployed: closed", Health{State: RegionDeployed}, t0, Try, ""},
		{"Deployed ignores stale breaker fields", Health{State: RegionDeployed, OpenUntil: open}, t0, Try, ""},
		{"open", Health{State: RegionUnhealthy, OpenUntil: open}, t0, Skip, "unhealthy: circuit open until 2025-06-01T12:01:00Z"},
		{"open, reason in UTC", Health{State: RegionUnhealthy, OpenUntil: open.In(time.FixedZone("X", 3600))}, t0, Skip, "unhealthy: circuit open until 2025-06-01T12:01:00Z"},
		{"open until the last instant", Health{State: RegionUnhealthy, OpenUntil: open}, open.Add(-time.Nanosecond), Skip, "unhealthy: circuit open until 2025-06-01T12:01:00Z"},
		{"cooldown ends exactly at OpenUntil: half-open", Health{State: RegionUnhealthy, OpenUntil: open}, open, Probe, ""},
		{"half-open after cooldown", Health{State: RegionUnhealthy, OpenUntil: open}, open.Add(time.Hour), Probe, ""},
		{"half-open without OpenUntil", Health{State: RegionUnhealthy}, t0, Probe, ""},
		{"probe in flight", Health{State: RegionUnhealthy, OpenUntil: open, ProbeUntil: open.Add(30 * time.Second)}, open.Add(time.Second), Skip, "unhealthy: another request is probing it"},
		{"probe lease ends exactly at ProbeUntil", Health{State: RegionUnhealthy, OpenUntil: open, ProbeUntil: open.Add(30 * time.Second)}, open.Add(30 * time.Second), Probe, ""},
		{"expired probe lease", Health{State: RegionUnhealthy, OpenUntil: open, ProbeUntil: open.Add(30 * time.Second)}, open.Add(time.Minute), Probe, ""},
		{"open wins over an old probe", Health{State: RegionUnhealthy, OpenUntil: open, ProbeUntil: t0.Add(-time.Second)}, t0, Skip, "unhealthy: circuit open until 2025-06-01T12:01:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := p.Decide(tt.h, tt.now)
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("Decide = %v %q, want %v %q", got, reason, tt.want, tt.wantReason)
			}
		})
	}
}

func TestNoPingDue(t *testing.T) {
	p := DefaultBreakerPolicy // NoPingUnhealthyAfter 5m
	now := t0.Add(time.Hour)
	tests := []struct {
		name string
		h    Health
		want bool
	}{
		{"targets seen recently", Health{State: RegionDeployed, LastPingTargetsAt: now.Add(-time.Minute)}, false},
		{"targets seen exactly 5m ago", Health{State: RegionDeployed, LastPingTargetsAt: now.Add(-5 * time.Minute)}, false},
		{"no targets for longer", Health{State: RegionDeployed, LastPingTargetsAt: now.Add(-6 * time.Minute)}, true},
		{"never seen, first recorded long ago", Health{State: RegionInitialized, FirstSeenAt: now.Add(-6 * time.Minute)}, true},
		{"never seen, first recorded recently", Health{State: RegionInitialized, FirstSeenAt: now.Add(-time.Minute)}, false},
		{"never recorded at all", Health{}, false},
		{"recent success keeps it", Health{State: RegionDeployed, LastPingTargetsAt: now.Add(-time.Hour), LastSuccessAt: now.Add(-time.Minute)}, false},
		{"old success does not", Health{State: RegionDeployed, LastPingTargetsAt: now.Add(-time.Hour), LastSuccessAt: now.Add(-time.Hour)}, true},
		{"already Unhealthy", Health{State: RegionUnhealthy, LastPingTargetsAt: now.Add(-time.Hour)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.NoPingDue(tt.h, now); got != tt.want {
				t.Errorf("noPingDue = %v, want %v", got, tt.want)
			}
		})
	}
}
