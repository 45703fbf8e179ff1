package template

import (
	"strconv"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// TestTemplateDefaultsAreShared: a deployment without overrides behaves as
// the code's defaults say, so changing one without the other fails here.
func TestTemplateDefaultsAreShared(t *testing.T) {
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	durations := map[string]time.Duration{
		"AllocateAttemptTimeout":     defaults.AttemptTimeout,
		"AllocationLease":            defaults.AllocationLease,
		"AllocationBudget":           defaults.AllocationBudget,
		"TokenCacheTtl":              defaults.TokenCacheTTL,
		"RecordRetention":            defaults.RecordRetention,
		"LinkTimeout":                defaults.LinkTimeout,
		"HealthPeriod":               defaults.HealthPeriod,
		"HealthInitialDelay":         defaults.HealthInitialDelay,
		"RegionCooldown":             defaults.RegionCooldown,
		"RegionNoPingUnhealthyAfter": defaults.RegionNoPingUnhealthyAfter,
		"QueueTimeout":               defaults.QueueTimeout,
		"FlexMatchQueueTimeout":      defaults.FlexMatchQueueTimeout,
	}
	numbers := map[string]int{
		"HealthFailureThreshold": defaults.HealthFailureThreshold,
		"MaxAllocationAttempts":  defaults.MaxAllocationAttempts,
		"RegionFailureThreshold": defaults.RegionFailureThreshold,
	}
	strs := map[string]string{
		"GameFabricPingPath":   defaults.PingPath,
		"PingRefreshSchedule":  defaults.PingRefreshSchedule,
		"HealthSweepSchedule":  defaults.HealthSweepSchedule,
		"MatchmakingEventName": defaults.MatchmakingEventName,
	}
	param := func(name string) string {
		def := tpl.params[name].Default
		if def.Kind == 0 {
			t.Fatalf("template.yaml has no default for parameter %s", name)
		}
		return def.Value
	}
	for name, want := range durations {
		if got, err := time.ParseDuration(param(name)); err != nil || got != want {
			t.Errorf("%s defaults to %q in template.yaml, %s in shared/defaults", name, param(name), want)
		}
	}
	for name, want := range numbers {
		if got, err := strconv.Atoi(param(name)); err != nil || got != want {
			t.Errorf("%s defaults to %q in template.yaml, %d in shared/defaults", name, param(name), want)
		}
	}
	for name, want := range strs {
		if got := param(name); got != want {
			t.Errorf("%s defaults to %q in template.yaml, %q in shared/defaults", name, got, want)
		}
	}
}
