//go:build integration

package tests

import (
	"context"
	"net/http"
	"testing"
	"time"

	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// Queued placements end to end, on the real bootstraps: us-west has one
// game server and it is taken, so a second game instance is queued (202)
// and PlacementFunction's bootstrap, fed by the local SQS event source on
// moto, keeps trying; when the first game ends its server comes back to
// the Allocator and the queued instance gets it: one upstream allocation,
// Allocated, then Linked. A third is cancelled while queued and never
// reaches GameFabric.
func TestQueuedPlacementOnTheLocalStack(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Fleet.Stagger = 100 * time.Millisecond
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": {{Command: localstack.SampleServer, ConcurrentExecutions: 1,
		Env: sampleServerEnv("2m")}}}
	cfg.Parameters["FallbackRegion"] = "us-west"
	s, _ := startLocalStack(t, cfg, t.TempDir())
	ctx := context.Background()
	backend, us := backendClient(t, s), s.Allocators[0]
	testkit.WaitFor(t, 30*time.Second, "a us-west game server registered", func() bool { return len(registeredAt(us, "dev-us-west")) == 1 })
	state := func(id string) string {
		if a, err := backend.Get(ctx, id); err == nil {
			return string(a.State)
		}
		return ""
	}
	queue := 60
	if status, a, err := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: "gi-busy", DesiredRegion: "us-west"}); status != http.StatusCreated {
		t.Fatalf("the first game: %d %+v %v", status, a, err)
	}
	testkit.WaitFor(t, 15*time.Second, "gi-busy Linked", func() bool { return state("gi-busy") == "Linked" })

	waited := make(chan *allocclient.Allocation, 1)
	go func() {
		a, err := backend.AllocateAndWait(ctx, allocclient.AllocateRequest{GameInstanceID: "gi-waits", DesiredRegion: "us-west", QueueTimeoutSeconds: &queue})
		if err != nil {
			t.Errorf("AllocateAndWait: %v", err)
		}
		waited <- a
	}()
	testkit.WaitFor(t, 10*time.Second, "gi-waits Queued", func() bool { return state("gi-waits") == allocclient.StateQueued })
	// allocclient answers a 202 as a Queued allocation, not Created.
	cancelled, err := backend.Allocate(ctx, allocclient.AllocateRequest{GameInstanceID: "gi-cancelled", DesiredRegion: "us-west", QueueTimeoutSeconds: &queue})
	if err != nil || cancelled.State != allocclient.StateQueued || cancelled.QueuedUntil.IsZero() || cancelled.RetryAfter < time.Second {
		t.Fatalf("a second queued placement: %+v %v", cancelled, err)
	}
	if a, err := backend.End(ctx, "gi-cancelled"); err != nil || a.State != allocclient.StateFailed || a.Error == nil || a.Error.Code != "PLACEMENT_CANCELLED" {
		t.Fatalf("DELETE while queued: %+v, %v", a, err)
	}
	time.Sleep(2 * time.Second) // the worker has run gi-waits's messages against a full region meanwhile
	if state("gi-waits") != allocclient.StateQueued && state("gi-waits") != allocclient.StateAllocating {
		t.Fatalf("gi-waits is %s while the only server is taken", state("gi-waits"))
	}
	before := len(us.Emulator.Allocations())
	if _, err := backend.End(ctx, "gi-busy"); err != nil { // the game ends; its server comes back
		t.Fatal(err)
	}
	var placed *allocclient.Allocation
	select {
	case placed = <-waited:
	case <-time.After(45 * time.Second):
		t.Fatal("gi-waits was not placed within 45 s of capacity returning")
	}
	if placed == nil || placed.State != allocclient.StateAllocated && placed.State != "Linked" || placed.QueuedUntil.IsZero() {
		t.Fatalf("AllocateAndWait returned %+v", placed)
	}
	testkit.WaitFor(t, 15*time.Second, "gi-waits Linked", func() bool { return state("gi-waits") == "Linked" })
	if got := len(us.Emulator.Allocations()) - before; got != 1 {
		t.Fatalf("%d upstream allocations after capacity returned, want 1", got)
	}
	for _, a := range us.Emulator.Allocations() {
		if a.Payload["GameInstanceId"] == "gi-cancelled" {
			t.Fatal("the cancelled placement reached GameFabric")
		}
	}
}
