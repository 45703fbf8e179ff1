package stack

import (
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
)

// Drain reaches the Allocator that lists the Region, under its region
// string, and refuses Regions no Allocator lists and endless drains.
func TestDrain(t *testing.T) {
	c := twoAllocators(t)
	for _, a := range c.Allocators {
		a.Emulator = gfemu.New(gfemu.Config{})
	}
	us, eu := c.Allocators[0].Emulator, c.Allocators[1].Emulator
	tests := []struct {
		name, region string
		d            time.Duration
		wantErr      string
		wantUS       bool // dev-us-west drained afterwards
		wantEU       bool // dev-eu-central-1 drained afterwards
	}{
		{"us-west, at its Allocator", "us-west", 20 * time.Second, "", true, false},
		{"eu-central-1 too", "eu-central-1", time.Minute, "", true, true},
		{"a Region no Allocator lists", "ap-south", time.Minute, `no Allocator lists Region "ap-south"`, true, true},
		{"longer than MaxDrain", "us-west", MaxDrain + time.Second, "at most", true, true},
		{"0 refills", "us-west", 0, "", false, true},
		{"a negative time refills", "eu-central-1", -time.Second, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			until, err := c.Drain(tt.region, tt.d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || (tt.d > 0) == until.IsZero() {
				t.Fatalf("Drain = %v, %v", until, err)
			}
			if us.Drained("dev-us-west") != tt.wantUS || eu.Drained("dev-eu-central-1") != tt.wantEU {
				t.Errorf("drained: us-west %v, eu-central-1 %v; want %v, %v", us.Drained("dev-us-west"), eu.Drained("dev-eu-central-1"), tt.wantUS, tt.wantEU)
			}
			if got, ok := c.DrainedUntil(tt.region); tt.wantErr == "" && (ok != (tt.d > 0) || !got.Equal(until)) {
				t.Errorf("DrainedUntil = %v %v, want %v", got, ok, until)
			}
		})
	}
	if us.Drained("us-west") {
		t.Error("the Region's name was drained instead of its region string")
	}
}
