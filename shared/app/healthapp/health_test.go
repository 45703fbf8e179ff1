package healthapp

import (
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// The configuration resolves every field of the breaker's policy, so an
// unset environment gives the documented defaults and nothing downstream
// fills a field in again.
func TestPolicyComesWholeFromTheConfiguration(t *testing.T) {
	env := map[string]string{"GAME_INSTANCES_TABLE": "Instances", "REGION_HEALTH_TABLE": "Regions"}
	cfg, err := config.LoadLifecycle(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, b := RegionHealth(nil, cfg.RegionHealth)
	if b == nil || b.Policy != regionhealth.DefaultBreakerPolicy {
		t.Fatalf("policy from an unset environment = %+v, want %+v", b, regionhealth.DefaultBreakerPolicy)
	}
	if off, b := RegionHealth(nil, config.RegionHealth{}); b != nil || off != (regionhealth.Off{}) {
		t.Fatalf("no table: %T, %v; want regionhealth.Off", off, b)
	}
}
