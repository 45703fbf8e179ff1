//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gamelift"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// FlexMatch in front of the whole local stack, on the real bootstraps:
// MatchmakingSucceeded events on moto's default bus reach
// MatchmakingFunction through MatchmakingRule; DescribeMatchmaking is the
// GameLift stand-in; EventsFunction publishes the match's event again on
// the game-server bus, read from its tap.
func TestFlexMatchOnTheLocalStack(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Fleet.Stagger = 100 * time.Millisecond
	servers := []localstack.FleetProcess{{Command: localstack.SampleServer, ConcurrentExecutions: 2, Env: sampleServerEnv("2m")}}
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": servers, "eu-central-1": servers}
	cfg.Parameters["FallbackRegion"] = "us-west"
	s, _ := startLocalStack(t, cfg, t.TempDir())
	ctx := context.Background()
	backend := backendClient(t, s)
	us, eu := s.Allocators[0], s.Allocators[1]
	testkit.WaitFor(t, 30*time.Second, "two game servers registered in each region", func() bool {
		return len(registeredAt(us, "dev-us-west")) == 2 && len(registeredAt(eu, "dev-eu-central-1")) == 2
	})
	upstream := func() int { return len(us.Emulator.Allocations()) + len(eu.Emulator.Allocations()) }
	get := func(id string) *allocclient.Allocation {
		a, _ := backend.Get(ctx, id)
		return a
	}
	placed := func(id string) *allocclient.Allocation {
		t.Helper()
		var a *allocclient.Allocation
		testkit.WaitFor(t, 45*time.Second, "match "+id+" placed", func() bool {
			a = get(id)
			return a != nil && (a.State == allocclient.StateAllocated || a.State == "Linked")
		})
		return a
	}
	custom := func(s string) *string { return &s }
	var tap []localstack.Published
	// matchEvents reads the tap until want of id's re-published events
	// arrived (and 1 s more, for any extra): those events.
	matchEvents := func(id string, want int) []localstack.Published {
		t.Helper()
		var got []localstack.Published
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			evs, err := s.ReadTap(ctx, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			tap = append(tap, evs...)
			got = got[:0]
			for _, e := range tap {
				var d struct{ MatchID string }
				_ = json.Unmarshal(e.Detail, &d)
				if e.DetailType == "GameFabricMatchmakingSucceeded" && d.MatchID == id {
					got = append(got, e)
				}
			}
			if len(got) >= want && len(evs) == 0 {
				break
			}
		}
		return got
	}

	// 1. The players are near eu-central-1; customEventData says us-west:
	// the latencies decide. One event, one allocation, one re-published
	// event with the server's ip and game port.
	before := upstream()
	a, err := s.PutMatch(ctx, localstack.MatchOptions{Players: 4, Near: "eu-central-1", CustomEventData: custom(`{"region":"us-west"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec := placed(a)
	if rec.Region != "eu-central-1" || upstream()-before != 1 {
		t.Fatalf("match %s placed in %s after %d upstream allocations; want eu-central-1 after one", a, rec.Region, upstream()-before)
	}
	evs := matchEvents(a, 1)
	if len(evs) != 1 {
		t.Fatalf("%d GameFabricMatchmakingSucceeded events for %s, want 1", len(evs), a)
	}
	var again struct {
		Type            string
		MatchID         string
		IdempotencyKey  string
		Tickets         []struct{ TicketID string }
		GameSessionInfo struct {
			IPAddress      string
			Port           int
			GameSessionArn *string
			Players        []json.RawMessage
		}
	}
	if err := json.Unmarshal(evs[0].Detail, &again); err != nil {
		t.Fatal(err)
	}
	if evs[0].Source != "gamefabric.allocation" || again.Type != "GameFabricMatchmakingSucceeded" || again.GameSessionInfo.IPAddress != rec.Server.IP ||
		again.GameSessionInfo.Port != rec.Server.Ports["game"] || again.GameSessionInfo.Port == 0 || again.GameSessionInfo.GameSessionArn == nil ||
		*again.GameSessionInfo.GameSessionArn != "" || len(again.GameSessionInfo.Players) != 4 || len(again.Tickets) != 4 {
		t.Fatalf("re-published event %s, server %+v", evs[0].Raw, rec.Server)
	}

	// 2. The same event again: nothing allocated, nothing re-published.
	if _, err := s.PutMatch(ctx, localstack.MatchOptions{MatchID: a, Players: 4, Near: "eu-central-1", CustomEventData: custom(`{"region":"us-west"}`)}); err != nil {
		t.Fatal(err)
	}
	if evs := matchEvents(a, 2); len(evs) != 1 || upstream()-before != 1 {
		t.Fatalf("after a second copy: %d re-published events, %d upstream allocations; want 1 and 1", len(evs), upstream()-before)
	}

	// 3. DescribeMatchmaking failing (every attempt of the SDK):
	// customEventData.region decides.
	s.GameLift.Fail(gamelift.Fault{Status: 500, Type: "InternalServiceException"}, gamelift.Fault{Status: 500, Type: "InternalServiceException"},
		gamelift.Fault{Status: 500, Type: "InternalServiceException"})
	b, err := s.PutMatch(ctx, localstack.MatchOptions{Players: 2, Near: "eu-central-1", CustomEventData: custom(`{"region":"us-west"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if rec := placed(b); rec.Region != "us-west" {
		t.Fatalf("match %s without latencies placed in %s, want customEventData's us-west", b, rec.Region)
	}
	if evs := matchEvents(b, 1); len(evs) != 1 {
		t.Fatalf("%d re-published events for %s, want 1", len(evs), b)
	}

	// 4. Every region drained: the match waits (Queued, FLEXMATCH_QUEUE_TIMEOUT
	// 60 s) instead of failing, and its event comes once it is placed.
	for _, region := range []string{"us-west", "eu-central-1"} {
		if _, err := s.Drain(region, 6*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.PutMatch(ctx, localstack.MatchOptions{Players: 2, Near: "us-west"})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 15*time.Second, "match "+c+" queued", func() bool {
		a := get(c)
		return a != nil && a.State == allocclient.StateQueued
	})
	if evs := matchEvents(c, 0); len(evs) != 0 {
		t.Fatalf("a queued match was re-published: %s", evs[0].Raw)
	}
	placed(c)
	if evs := matchEvents(c, 1); len(evs) != 1 || !strings.Contains(string(evs[0].Detail), `"ipAddress"`) {
		t.Fatalf("%d re-published events for the queued match, want 1", len(evs))
	}
}
