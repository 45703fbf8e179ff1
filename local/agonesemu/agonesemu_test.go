package agonesemu

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

func start(t *testing.T, cfg Config) *Allocator {
	t.Helper()
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func identity(t *testing.T, secret string) *agones.Identity {
	t.Helper()
	id, err := agones.ParseIdentity(secret)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

var fleet = map[string]string{"agones.dev/fleet": "f"}

// seed003 is the adapter's rooms request: an Allocated server with a room
// free, else a Ready one, the counter incremented, the fullest first.
func seed003(order string) agones.AllocationRequest {
	free := map[string]agones.CounterSelector{"rooms": {MinAvailable: 1}}
	return agones.AllocationRequest{Namespace: "default", Scheduling: agones.SchedulingPacked,
		GameServerSelectors: []agones.GameServerSelector{{MatchLabels: fleet, GameServerState: agones.StateAllocated, Counters: free},
			{MatchLabels: fleet, GameServerState: agones.StateReady, Counters: free}},
		Counters:   map[string]agones.CounterAction{"rooms": {Action: agones.ActionIncrement, Amount: agones.I64(1)}},
		Priorities: []agones.Priority{{Type: agones.PriorityCounter, Key: "rooms", Order: order}},
		Metadata:   &agones.MetaPatch{Annotations: map[string]string{"p-GameInstanceId": "gi"}}}
}

func TestAllocationsFollowAgones(t *testing.T) {
	a := start(t, Config{})
	c, id := agones.NewClient(a.URL), identity(t, a.Secret())
	ports := []agones.Port{{Name: "game", Port: 7001}}
	a.Add(GameServer{Name: "other", Labels: map[string]string{"agones.dev/fleet": "g"}, Ports: ports})
	a.Add(GameServer{Name: "b", Labels: fleet, Ports: ports, Counters: map[string]agones.Count{"rooms": {Capacity: 3}}})
	a.Add(GameServer{Name: "a", Labels: fleet, Ports: ports, Counters: map[string]agones.Count{"rooms": {Capacity: 2}}})
	var got []string
	for range 5 {
		al, err := c.Allocate(context.Background(), id, seed003(agones.OrderAscending))
		if err != nil {
			got = append(got, err.Error())
			break
		}
		got = append(got, al.GameServerName+":"+itoa(al.Counters["rooms"].Count))
	}
	// Packed: a Ready one by name first, then the Allocated one with the
	// fewest rooms left, until none has a room.
	want := "a:1 a:2 b:1 b:2 b:3"
	if strings.Join(got, " ") != want {
		t.Fatalf("allocations %v, want %s", got, want)
	}
	_, err := c.Allocate(context.Background(), id, seed003(agones.OrderAscending))
	var e *upstreamhttp.Error
	if !errors.As(err, &e) || e.Status != 429 || e.Message != MsgUnallocated || !strings.Contains(e.Body, `"code":8`) {
		t.Fatalf("no room left: %v", err)
	}
	gs := a.GameServers()[0]
	if gs.Name != "a" || gs.State != StateAllocated || gs.Annotations["p-GameInstanceId"] != "gi" || gs.Annotations["agones.dev/last-allocated"] == "" {
		t.Fatalf("allocated GameServer %+v", gs)
	}
	if n := len(a.Allocations()); n != 5 {
		t.Fatalf("%d allocations logged, want 5", n)
	}
}

func TestScriptedAnswers(t *testing.T) {
	a := start(t, Config{UnallocatedStatus: 503})
	c, id := agones.NewClient(a.URL), identity(t, a.Secret())
	a.Add(GameServer{Labels: fleet, Ports: []agones.Port{{Name: "game", Port: 7001}}})
	whole := agones.AllocationRequest{GameServerSelectors: []agones.GameServerSelector{{MatchLabels: fleet, GameServerState: agones.StateReady}}}
	a.Queue(Answer{Status: 409, Message: MsgContention}, Answer{RawBody: `{"gameServerName":"x"}`}, Answer{LoseAnswer: true})
	ctx := context.Background()
	for _, want := range []string{"answered 409: " + MsgContention, "response has no address", "EOF|reset", "answered 503: " + MsgUnallocated} {
		_, err := c.Allocate(ctx, id, whole)
		if err == nil || !matchesAny(err.Error(), want) {
			t.Fatalf("got %v, want %q", err, want)
		}
	}
	calls := a.Calls()
	if len(calls) != 4 || calls[2].GameServer == "" || calls[2].Answered != 0 || len(a.Allocations()) != 1 {
		t.Fatalf("calls %+v: want the lost answer's allocation logged, unanswered", calls)
	}
	if _, err := c.Allocate(ctx, id, agones.AllocationRequest{Scheduling: "Sideways"}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a bad enum: %v", err)
	}
}

func TestMutualTLSRefusals(t *testing.T) {
	a := start(t, Config{})
	other, _ := NewCA("other")
	foreign, _ := other.ClientSecret(a.CA, time.Now().Add(time.Hour))  // the allocator refuses our certificate
	distrust, _ := a.CA.ClientSecret(other, time.Now().Add(time.Hour)) // we refuse the allocator's
	// The faulty allocators have CAs of their own, which their secrets trust.
	open, expired := start(t, Config{NoClientAuth: true}), start(t, Config{CertExpired: true})
	for name, tc := range map[string]struct {
		a      *Allocator
		secret string
	}{
		"client certificate of another CA": {a, foreign},
		"ca.crt of another CA":             {a, distrust},
		"allocator asks for none":          {open, open.Secret()},
		"allocator's certificate expired":  {expired, expired.Secret()},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := agones.NewClient(tc.a.URL).Allocate(context.Background(), identity(t, tc.secret), agones.AllocationRequest{})
			var e *upstreamhttp.Error
			if !errors.As(err, &e) || e.Kind != upstreamhttp.KindTLS {
				t.Fatalf("got %v, want a TLS refusal", err)
			}
			if len(tc.a.Calls()) != 0 {
				t.Fatalf("a refused handshake reached the handler: %+v", tc.a.Calls())
			}
		})
	}
}

func TestSDKServesItsGameServer(t *testing.T) {
	a := start(t, Config{})
	sdk, err := a.StartSDK(GameServer{Labels: fleet, Ports: []agones.Port{{Name: "game", Port: 7001}}, Counters: map[string]agones.Count{"rooms": {Capacity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	client := &gameserver.AgonesSDK{URL: sdk.URL, Prefix: "p-"}
	ctx := context.Background()
	gs, err := client.GameServer(ctx)
	if err != nil || gs.Status.State != StateScheduled || gs.ObjectMeta.Labels["agones.dev/fleet"] != "f" || gs.Status.Ports[0].Port != 7001 {
		t.Fatalf("GameServer %+v, %v", gs, err)
	}
	if err := client.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	req := seed003(agones.OrderAscending)
	req.Metadata.Annotations = map[string]string{"p-GameInstanceId": "gi-1", "p-PartnerGameToken": strings.Repeat("t", 43),
		"p-pragmaBackendAddress": "http://127.0.0.1:1", "p-last-applied": "gi-1"}
	if _, err := agones.NewClient(a.URL).Allocate(ctx, identity(t, a.Secret()), req); err != nil {
		t.Fatal(err)
	}
	p, err := client.WaitForPayload(ctx, "", 5*time.Millisecond)
	if err != nil || p.GameInstanceID != "gi-1" {
		t.Fatalf("payload %+v, %v", p, err)
	}
	if err := client.AddToCounter(ctx, "rooms", -1); err != nil {
		t.Fatal(err)
	}
	if err := client.AddToCounter(ctx, "rooms", -1); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("below 0: %v", err)
	}
	raw := get(t, sdk.URL+"/gameserver")
	if !strings.Contains(raw, `"rooms":{"capacity":"2","count":"0"}`) || !strings.Contains(raw, `"state":"Allocated"`) {
		t.Fatalf("GET /gameserver = %s", raw)
	}
	if err := client.Shutdown(ctx); err != nil || a.GameServers()[0].State != StateShutdown {
		t.Fatalf("shutdown: %v, %+v", err, a.GameServers())
	}
	_ = sdk.Close()
	if len(a.GameServers()) != 0 {
		t.Fatal("the closed SDK's GameServer is still there")
	}
}

func get(t *testing.T, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	if json.Unmarshal(raw, &v) != nil {
		t.Fatalf("%s is not JSON: %s", url, raw)
	}
	return string(raw)
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func matchesAny(s, alternatives string) bool {
	for alt := range strings.SplitSeq(alternatives, "|") {
		if strings.Contains(s, alt) {
			return true
		}
	}
	return false
}
