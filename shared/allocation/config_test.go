package allocation

import (
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
)

func TestOptionsFrom(t *testing.T) {
	o := OptionsFrom(config.Allocate{FallbackRegion: "eu", FallbackEnvironment: "prod", FallbackArmadaSet: "arena",
		MaxAllocationAttempts: 4, MaxPlayerLatencyMs: 150, BackendAddress: "https://api", AttemptTimeout: time.Second,
		AllocationLease: 2 * time.Second, RecordRetention: 3 * time.Second, LinkTimeout: 4 * time.Second})
	want := Defaults{Region: "eu", Environment: "prod", ArmadaSet: "arena", MaxAttempts: 4, MaxPlayerLatencyMs: 150}
	if o.Defaults != want || o.BackendAddress != "https://api" || o.AttemptTimeout != time.Second ||
		o.Lease != 2*time.Second || o.Retention != 3*time.Second || o.LinkTimeout != 4*time.Second {
		t.Fatalf("OptionsFrom = %+v", o)
	}
}
