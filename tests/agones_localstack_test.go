//go:build integration

package tests

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/player"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// make dev's Agones region on the real bootstraps: AllocateFunction asks
// the Agones stand-in over mutual TLS (its client secret in moto), and the
// Fleet's sample servers, each a GameServer with its own SDK server, read
// their payload from the annotations, link, heartbeat and end: a dedicated
// one (its Counter's capacity 1) shuts its GameServer down after its game
// (the fleet starts a new pod), one with rooms takes each new session
// Agones counts on its Counter and frees the room when a session ends.
func TestAgonesEndToEnd(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Fleet.Stagger = 100 * time.Millisecond
	env := []string{"HEARTBEAT_INTERVAL=300ms", "MAX_GAME_LENGTH=2m"}
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{cfg.Agones.Region: {
		{Command: localstack.SampleServer, ConcurrentExecutions: 1, Rooms: 2, Env: env},
		{Command: localstack.SampleServer, ConcurrentExecutions: 1, Env: env}}}
	s, logs := startLocalStack(t, cfg, t.TempDir())
	g, backend, ctx := s.Agones, backendClient(t, s), context.Background()
	testkit.WaitFor(t, 30*time.Second, "two Ready GameServers", func() bool { return len(g.Ready()) == 2 })
	state := func(id string) string { return agonesGameState(backend, id) }
	allocate := func(id, placement string) *allocclient.Allocation {
		t.Helper()
		status, a, err := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: id, DesiredRegion: cfg.Agones.Region})
		if status != http.StatusCreated || string(a.Placement) != placement || a.Attempts[0].AllocatorKind != "agones" || a.Attempts[0].GameServerName == "" {
			t.Fatalf("allocate %s: %d %+v %v, want placement %s from Agones", id, status, a, err, placement)
		}
		testkit.WaitFor(t, 15*time.Second, id+" Linked", func() bool { return state(id) == "Linked" })
		return a
	}
	win := func(a *allocclient.Allocation) { winAgonesGame(t, backend, a) }

	// Packed with the Counter's priority: the fullest first, so the first
	// game takes the dedicated process's GameServer (capacity 1), which
	// reads the payload, links and heartbeats; the next two share the
	// other's rooms, its Counter counting them.
	own := allocate("gi-ag-own", "allocator")
	testkit.WaitFor(t, 10*time.Second, "gi-ag-own's heartbeat", func() bool {
		a, err := backend.Get(ctx, "gi-ag-own")
		return err == nil && a.LastHeartbeatAt.After(a.LinkedAt)
	})
	first := allocate("gi-ag-1", "allocator")
	second := allocate("gi-ag-2", "room")
	if first.Server.Address != second.Server.Address || first.Server.Address == own.Server.Address {
		t.Fatalf("rooms on %s and %s, the dedicated game on %s", first.Server.Address, second.Server.Address, own.Server.Address)
	}
	rooms := func() int64 {
		for _, gs := range g.Allocator.GameServers() {
			if gs.Name == first.Attempts[0].GameServerName {
				return gs.Counters["rooms"].Count
			}
		}
		return -1
	}
	if rooms() != 2 {
		t.Fatalf("rooms counted %d, want 2", rooms())
	}

	// Each game ends on its own: the room is freed and taken again; the
	// dedicated server shuts its GameServer down and a new pod is Ready.
	win(second)
	testkit.WaitFor(t, 10*time.Second, "gi-ag-2's room freed", func() bool { return rooms() == 1 })
	allocate("gi-ag-3", "room")
	win(own)
	testkit.WaitFor(t, 20*time.Second, "the dedicated server's next pod", func() bool {
		ready := g.Ready()
		return len(g.Allocator.GameServers()) == 2 && len(ready) == 1 && ready[0].Name != own.Attempts[0].GameServerName
	})
	if state("gi-ag-1") != "Linked" || state("gi-ag-3") != "Linked" {
		t.Fatalf("the rooms' games: %s, %s", state("gi-ag-1"), state("gi-ag-3"))
	}
	if n := strings.Count(logs.String(), "waiting for a payload in the GameServer's annotations"); n < 3 {
		t.Fatalf("%d sample servers waited for a payload in the annotations, want 3 (two, then the new pod)", n)
	}
	for _, c := range g.Allocator.Calls() {
		if c.Answered != http.StatusOK || c.Request.Metadata.Annotations["agones.dev/sdk-payload-GameInstanceId"] == "" {
			t.Fatalf("an Agones call %+v", c)
		}
	}
}

func agonesGameState(backend *allocclient.Client, id string) string {
	a, err := backend.Get(context.Background(), id)
	if err != nil {
		return ""
	}
	return string(a.State)
}

// winAgonesGame ends a's game as its player does, and waits for Ended.
func winAgonesGame(t *testing.T, backend *allocclient.Client, a *allocclient.Allocation) {
	t.Helper()
	addr, err := player.GameAddress(a.Server)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := player.SendIWONFor(context.Background(), addr, a.GameInstanceID); err != nil || !out.GameOver {
		t.Fatalf("IWON to %s: %+v %v", a.GameInstanceID, out, err)
	}
	testkit.WaitFor(t, 10*time.Second, a.GameInstanceID+" Ended", func() bool { return agonesGameState(backend, a.GameInstanceID) == "Ended" })
}
