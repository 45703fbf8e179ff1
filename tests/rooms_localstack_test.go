//go:build integration

package tests

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/player"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Rooms end to end, on the real bootstraps: a sample server in us-west
// offers 3 rooms when its first game links; the next allocations take its
// rooms through its session callback, each game links and ends on its own
// while one all-sessions heartbeat loop renews them all, a player's win
// ends one game only, GameServerAllocated says where each went, and when
// the server dies the health sweep gives every room back and closes it.
func TestRoomsEndToEnd(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Fleet.Stagger = 100 * time.Millisecond
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": {{Command: localstack.SampleServer, ConcurrentExecutions: 1, Rooms: 3,
		Env: sampleServerEnv("2m")}}}
	for k, v := range map[string]string{"FallbackRegion": "us-west", "LinkTimeout": "3s", "HealthPeriod": "2s",
		"HealthFailureThreshold": "2", "HealthInitialDelay": "0s"} {
		cfg.Parameters[k] = v
	}
	workDir := t.TempDir()
	s, logs := startLocalStack(t, cfg, workDir)
	ctx := context.Background()
	backend, us, bus := backendClient(t, s), s.Allocators[0], &eventLog{s: s}
	servers := store.NewGameServers(harness.NewDynamoDB(harness.AWSConfig(), s.DynamoDB), s.Refs["GameServersTable"], s.Refs["GameInstancesTable"], time.Hour)
	testkit.WaitFor(t, 30*time.Second, "a us-west game server registered", func() bool { return len(registeredAt(us, "dev-us-west")) == 1 })
	state := func(id string) string {
		if a, err := backend.Get(ctx, id); err == nil {
			return string(a.State)
		}
		return ""
	}
	allocate := func(id, want string) *allocclient.Allocation {
		t.Helper()
		status, a, err := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: id, DesiredRegion: "us-west"})
		if status != http.StatusCreated || string(a.Placement) != want {
			t.Fatalf("allocate %s: %d, placement %q (want %q): %+v %v", id, status, a.Placement, want, a, err)
		}
		return a
	}

	first := allocate("gi-room-1", allocclient.PlacementAllocator)
	testkit.WaitFor(t, 15*time.Second, "gi-room-1 Linked", func() bool { return state("gi-room-1") == "Linked" })
	var gs gameinstance.GameServer
	testkit.WaitFor(t, 5*time.Second, "the server's rooms on record", func() bool {
		var err error
		gs, err = servers.Get(ctx, first.Server.Address)
		return err == nil
	})
	if gs.Capacity != 3 || gs.InUse != 1 || !gs.Accepting {
		t.Fatalf("game server record: %v", gs)
	}

	// Two more games on the same server, through its session callback.
	for _, id := range []string{"gi-room-2", "gi-room-3"} {
		a := allocate(id, allocclient.PlacementRoom)
		if a.Server.Address != first.Server.Address || a.Server.Ports["game"] != first.Server.Ports["game"] || a.Attempts[0].Server != first.Server.Address {
			t.Fatalf("%s on %+v, want the shared server %+v", id, a.Server, first.Server)
		}
	}
	testkit.WaitFor(t, 15*time.Second, "three games Linked", func() bool {
		return state("gi-room-2") == "Linked" && state("gi-room-3") == "Linked"
	})
	// The server heartbeats through its first game only ({"allSessions":
	// true}), and that renews the other two: the backend records their
	// heartbeats (at most once per HEALTH_PERIOD, 2 s here).
	linkedAt := map[string]time.Time{}
	for _, id := range []string{"gi-room-2", "gi-room-3"} {
		a, err := backend.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		linkedAt[id] = a.LinkedAt
	}
	testkit.WaitFor(t, 10*time.Second, "gi-room-2 and gi-room-3 renewed", func() bool {
		for id, at := range linkedAt {
			if a, err := backend.Get(ctx, id); err != nil || a.State != "Linked" || !a.LastHeartbeatAt.After(at) {
				return false
			}
		}
		return true
	})
	if loops := regexp.MustCompile(`heartbeating every session through (\S+)`).FindAllStringSubmatch(logs.String(), -1); len(loops) != 1 || loops[0][1] != "gi-room-1" {
		t.Fatalf("the server's heartbeat loops: %q, want one through gi-room-1", loops)
	}
	// Full: GameFabric has no other us-west server.
	if status, a, _ := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: "gi-room-full", DesiredRegion: "us-west"}); status != http.StatusServiceUnavailable ||
		len(a.Attempts) != 1 || a.Attempts[0].Placement != "" {
		t.Fatalf("a full server: %d %+v", status, a)
	}

	// One player wins one game: the others play on.
	addr, err := player.GameAddress(first.Server)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := player.SendIWONFor(ctx, addr, "gi-room-2"); err != nil || !out.GameOver {
		t.Fatalf("IWON to gi-room-2: %+v %v", out, err)
	}
	testkit.WaitFor(t, 10*time.Second, "gi-room-2 Ended", func() bool { return state("gi-room-2") == "Ended" })
	if state("gi-room-1") != "Linked" || state("gi-room-3") != "Linked" {
		t.Fatalf("the other games: %s, %s", state("gi-room-1"), state("gi-room-3"))
	}
	if gs, _ = servers.Get(ctx, first.Server.Address); gs.InUse != 2 {
		t.Fatalf("%d rooms in use after one game ended, want 2", gs.InUse)
	}
	allocate("gi-room-4", allocclient.PlacementRoom) // the freed room

	got := bus.await(t, "gi-room-2", 3)
	wantSequence(t, got, "GameServerAllocated Allocating→Allocated", "GameServerLinked Allocated→Linked", "GameInstanceEnded Linked→Ended")
	if d := got[0].detail; d["placement"] != "room" || d["server"].(map[string]any)["address"] != first.Server.Address {
		t.Errorf("GameServerAllocated of a room: %v", d)
	}
	if got := bus.await(t, "gi-room-1", 2); got[0].detail["placement"] != "allocator" {
		t.Errorf("GameServerAllocated of the first game: %v", got[0].detail)
	}

	// The server dies with three games in play: the sweep marks each
	// Unhealthy, gives its room back and closes the server.
	killServer(t, filepath.Join(workDir, "fleet", "us-west", "0"))
	sweepUntil(t, s, func() bool {
		return state("gi-room-1") == "Unhealthy" && state("gi-room-3") == "Unhealthy" && state("gi-room-4") == "Unhealthy"
	})
	if gs, _ = servers.Get(ctx, first.Server.Address); gs.InUse != 0 || gs.Accepting || gs.ClosedReason != gameinstance.ClosedSessionUnhealthy {
		t.Fatalf("after the server died: %v (%s)", gs, gs.ClosedReason)
	}
	// Its replacement registers; the next game goes there, not to a room.
	testkit.WaitFor(t, 30*time.Second, "a replacement us-west server", func() bool {
		r := registeredAt(us, "dev-us-west")
		return len(r) == 1 && r[0] != first.Server.Address
	})
	if a := allocate("gi-room-5", allocclient.PlacementAllocator); a.Server.Address == first.Server.Address {
		t.Fatalf("allocated on the dead server")
	}
}

// killServer kills the game server process working in dir, as a crash
// would: no end, no goodbye.
func killServer(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no process works in %s", dir)
}
