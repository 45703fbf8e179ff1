package main

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// On Agones with a rooms Counter: the server marks its GameServer Ready,
// plays each payload Agones annotates as a session of its own, frees a
// room when one ends, and shuts its GameServer down when told to stop.
func TestAgonesRoomsSessionsFreeTheirRooms(t *testing.T) {
	a, err := agonesemu.Start(agonesemu.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	sdk, err := a.StartSDK(agonesemu.GameServer{Labels: map[string]string{"agones.dev/fleet": "f"}, Ports: []agones.Port{{Name: "game", Port: agones.Int64(port)}},
		Counters: map[string]agones.Count{roomsCounter: {Capacity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, func(h *harness) {
		h.cfg.Agones = &gameserver.AgonesSDK{URL: sdk.URL, Prefix: "agones.dev/sdk-payload-"}
		h.cfg.Rooms, h.cfg.GamePort, h.cfg.ServerName = 2, port, "gs-a"
	})
	gameServer := func() agonesemu.GameServer { return a.GameServers()[0] }
	testkit.WaitFor(t, 10*time.Second, "Ready", func() bool { return gameServer().State == agonesemu.StateReady })
	client, id := agones.NewClient(a.URL), mustIdentity(t, a.Secret())
	for _, gi := range []string{"gi-1", "gi-2"} {
		ann := map[string]string{}
		for k, v := range h.payload {
			ann["agones.dev/sdk-payload-"+k] = v.(string)
		}
		ann["agones.dev/sdk-payload-GameInstanceId"] = gi
		if _, err := client.Allocate(context.Background(), id, agones.AllocationRequest{Metadata: &agones.MetaPatch{Annotations: ann},
			Counters:            map[string]agones.CounterAction{roomsCounter: {Action: agones.ActionIncrement, Amount: agones.I64(1)}},
			GameServerSelectors: []agones.GameServerSelector{{GameServerState: agones.StateAllocated}, {GameServerState: agones.StateReady}}}); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, 10*time.Second, gi+" linked", func() bool { return linked(h, gi) })
	}
	count := func() int64 { return gameServer().Counters[roomsCounter].Count }
	if count() != 2 {
		t.Fatalf("rooms counted %d, want 2", count())
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(conn)
	for _, send := range []string{"", "JOIN gi-1\n", "IWON\n"} {
		_, _ = conn.Write([]byte(send))
		if line, _ := rd.ReadString('\n'); line == "" || strings.HasPrefix(line, "NO") {
			t.Fatalf("after %q: %q", send, line)
		}
	}
	testkit.WaitFor(t, 10*time.Second, "gi-1's room freed", func() bool { return count() == 1 })
	h.cancel()
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
	if _, _, ends := h.backend.snapshot(); strings.Join(ends, ",") != "IWON,Terminated" || count() != 0 || gameServer().State != agonesemu.StateShutdown {
		t.Fatalf("ends %v, rooms counted %d, GameServer %s", ends, count(), gameServer().State)
	}
}

func linked(h *harness, id string) bool {
	calls, _ := h.backend.history()
	for _, c := range calls {
		if c.op == "link" && c.id == id && c.link.Rooms == nil {
			return true
		}
	}
	return false
}

func mustIdentity(t *testing.T, secret string) *agones.Identity {
	id, err := agones.ParseIdentity(secret)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
