package stack

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
)

func TestParseDrain(t *testing.T) {
	tests := []struct {
		in      string
		want    DrainSchedule
		wantErr string
	}{
		{"us-west:20s", DrainSchedule{Region: "us-west", For: 20 * time.Second}, ""},
		{" us-west:20s/1m ", DrainSchedule{Region: "us-west", For: 20 * time.Second, Every: time.Minute}, ""},
		{"eu-central-1:1h", DrainSchedule{Region: "eu-central-1", For: time.Hour}, ""},
		{"us-west", DrainSchedule{}, "want <region>:<for>"},
		{":20s", DrainSchedule{}, "want <region>:<for>"},
		{"us-west:soon", DrainSchedule{}, "from 1s to 1h0m0s"},
		{"us-west:500ms", DrainSchedule{}, "from 1s"},
		{"us-west:2h", DrainSchedule{}, "to 1h0m0s"},
		{"us-west:20s/20s", DrainSchedule{}, "longer than 20s"},
		{"us-west:20s/often", DrainSchedule{}, "the period"},
		{"us-west:20s/48h", DrainSchedule{}, "at most 24h"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDrain(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDrain = %+v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDrain = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// make dev's DRAIN is checked like dev.yaml: a Region no Allocator lists
// is an error at start-up, not a drain that never happens.
func TestAddDrains(t *testing.T) {
	tests := []struct {
		spec    string
		want    int // schedules afterwards
		wantErr string
	}{
		{"", 0, ""},
		{"us-west:20s", 1, ""},
		{"us-west:20s/1m, eu-central-1:10s,", 2, ""},
		{"ap-south:20s", 1, "gamefabric.drain[0]: no Allocator lists Region ap-south"},
		{"us-west:20", 1, "gamefabric.drain[0]: drain \"us-west:20\""},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			c := Defaults()
			err := c.AddDrains(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("AddDrains = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(c.drainSchedules()) != tt.want {
				t.Fatalf("AddDrains = %v, schedules %v; want %d", err, c.drainSchedules(), tt.want)
			}
		})
	}
}

// A schedule drains, refills after For, drains again after Every, and
// stops with the stack.
func TestRunDrain(t *testing.T) {
	s := &Stack{Components: twoAllocators(t), log: slog.New(slog.DiscardHandler)}
	for _, a := range s.Allocators {
		a.Emulator = gfemu.New(gfemu.Config{})
	}
	us := s.Allocators[0].Emulator
	ctx, cancel := context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.runDrain(ctx, DrainSchedule{Region: "us-west", For: 400 * time.Millisecond, Every: 800 * time.Millisecond})
	// Sampled mid-phase: dry at 200 ms, refilled at 600 ms, dry again at 1 s.
	for i, want := range []bool{true, false, true} {
		time.Sleep(map[int]time.Duration{0: 200, 1: 400, 2: 400}[i] * time.Millisecond)
		if us.Drained("dev-us-west") != want {
			t.Fatalf("sample %d: drained %v, want %v", i, !want, want)
		}
	}
	cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the schedule did not stop with its context")
	}
}
