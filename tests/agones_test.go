//go:build integration

package tests

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

const agonesPrefix = "agones.dev/sdk-payload-" // the default annotationPrefix

func agonesBody(id, extra string) string {
	return fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":%q%s}`, id, agonesRegion, extra)
}

// kinds lists attempts as "region:status:allocatorKind".
func kinds(r response) []string {
	var out []string
	for _, a := range r.attempts() {
		out = append(out, fmt.Sprint(a["region"], ":", a["status"], ":", a["allocatorKind"]))
	}
	return out
}

// linkAnnotated links id as its game server would: with the token
// Agones' annotations carry, and the GameServer's address.
func (e *env) linkAnnotated(t *testing.T, id string, gs agonesemu.GameServer) response {
	t.Helper()
	port := int(gs.Ports[0].Port)
	return e.doAuth(t, http.MethodPost, "/v1/game-instances/"+id+"/link", "Bearer "+gs.Annotations[agonesPrefix+"PartnerGameToken"],
		fmt.Sprintf(`{"address":"%s:%d","ports":{"game":%d}}`, gs.Address, port, port))
}

// requireRegionHealthy: agonesRegion's breaker recorded no failure.
func (e *env) requireRegionHealthy(t *testing.T) {
	t.Helper()
	if h := getHealth(t, e.health, agonesRegion); h.State == regionhealth.RegionUnhealthy || h.ConsecutiveFailures != 0 {
		t.Fatalf("%s's health %+v, want no failure recorded", agonesRegion, h)
	}
}

// A rooms Counter: the first game instance takes a Ready server, the next
// a room on it (placement room, its own record), a dedicated one a Ready
// server whose capacity becomes 1; then no room is left anywhere.
func TestAgonesRoomsThroughTheCounter(t *testing.T) {
	a := startAgones(t, agonesemu.Config{})
	addAgonesServers(a, 2, 2)
	e := newEnv(t, envOptions{agones: &agonesOptions{allocator: a, roomsCounter: "rooms"}})

	first := e.allocate(t, agonesBody("gi-1", "")).expect(t, http.StatusCreated, "")
	second := e.allocate(t, agonesBody("gi-2", "")).expect(t, http.StatusCreated, "")
	own := e.allocate(t, agonesBody("gi-3", `,"dedicated":true`)).expect(t, http.StatusCreated, "")
	e.allocate(t, agonesBody("gi-4", "")).expect(t, http.StatusServiceUnavailable, "NO_CAPACITY")
	for _, c := range []struct {
		r         response
		placement string
		address   string
	}{{first, "allocator", "127.0.0.1:7100"}, {second, "room", "127.0.0.1:7100"}, {own, "allocator", "127.0.0.1:7101"}} {
		a0 := c.r.attempts()[0]
		if c.r.Body["placement"] != c.placement || serverAddress(c.r) != c.address || c.r.Body["roomServer"] != nil ||
			a0["allocatorKind"] != "agones" || a0["nodeName"] != "node-1" || a0["gameServerName"] == nil {
			t.Fatalf("got %s, want placement %s on %s", c.r.Raw, c.placement, c.address)
		}
	}
	calls := a.Calls()
	want := agones.AllocationRequest{Namespace: "default", Scheduling: agones.SchedulingPacked,
		GameServerSelectors: []agones.GameServerSelector{
			{MatchLabels: agonesLabels, GameServerState: agones.StateAllocated, Counters: map[string]agones.CounterSelector{"rooms": {MinAvailable: 1}}},
			{MatchLabels: agonesLabels, GameServerState: agones.StateReady, Counters: map[string]agones.CounterSelector{"rooms": {MinAvailable: 1}}}},
		Counters:   map[string]agones.CounterAction{"rooms": {Action: agones.ActionIncrement, Amount: agones.I64(1)}},
		Priorities: []agones.Priority{{Type: agones.PriorityCounter, Key: "rooms", Order: agones.OrderAscending}}}
	got := calls[0].Request
	got.Metadata = nil
	if len(calls) != 4 || !reflect.DeepEqual(got, want) {
		t.Fatalf("Agones got %d calls, the first %+v; want %+v", len(calls), got, want)
	}
	if c := calls[2].Request.Counters["rooms"]; c.Capacity == nil || *c.Capacity != 1 || calls[2].Request.GameServerSelectors[0].GameServerState != agones.StateReady {
		t.Fatalf("the dedicated request %+v, want a Ready server with capacity 1", calls[2].Request)
	}
	servers := a.GameServers()
	if servers[0].Counters["rooms"] != (agones.Count{Count: 2, Capacity: 2}) || servers[1].Counters["rooms"] != (agones.Count{Count: 1, Capacity: 1}) {
		t.Fatalf("counters %+v %+v", servers[0].Counters, servers[1].Counters)
	}
	// Each game instance is its own record; the server's annotations hold
	// its latest session's payload, whose token links it.
	if ann := servers[0].Annotations; ann[agonesPrefix+"GameInstanceId"] != "gi-2" || ann[agonesPrefix+"last-applied"] != "gi-2" {
		t.Fatalf("annotations %v", ann)
	}
	if r := e.linkAnnotated(t, "gi-2", servers[0]).expect(t, http.StatusOK, ""); r.Body["state"] != "Linked" {
		t.Fatalf("link = %s", r.Raw)
	}
	if e.state(t, "gi-1") != "Allocated" || e.state(t, "gi-4") != "Failed" {
		t.Fatalf("gi-1 %s, gi-4 %s", e.state(t, "gi-1"), e.state(t, "gi-4"))
	}
	e.requireRegionHealthy(t)
}

// A whole server on a fleet without rooms; then Agones' answers in one
// plan with a GameFabric region behind it: no GameServer (429) falls back,
// contention (409) is asked again at most twice.
func TestAgonesWholeServersAndFallback(t *testing.T) {
	a := startAgones(t, agonesemu.Config{})
	addAgonesServers(a, 1, 0)
	e := newEnv(t, envOptions{agones: &agonesOptions{allocator: a}, fallbackRegion: "us-west"})
	e.stub.Always("us-west", gfemu.Answer{})

	r := e.allocate(t, agonesBody("gi-whole", "")).expect(t, http.StatusCreated, "")
	ports, _ := r.Body["server"].(map[string]any)["ports"].(map[string]any)
	if r.Body["region"] != agonesRegion || serverAddress(r) != "127.0.0.1:7100" || ports["game"] != float64(7100) || r.Body["placement"] != "allocator" {
		t.Fatalf("whole server = %s", r.Raw)
	}
	req := a.Calls()[0].Request
	ann := req.Metadata.Annotations
	if len(req.GameServerSelectors) != 1 || req.Counters != nil || ann[agonesPrefix+"GameInstanceId"] != "gi-whole" ||
		ann[agonesPrefix+"pragmaBackendAddress"] != "http://127.0.0.1:10100" || len(ann[agonesPrefix+"PartnerGameToken"]) < 32 {
		t.Fatalf("request %+v", req)
	}
	if strings.Contains(r.Raw, ann[agonesPrefix+"PartnerGameToken"]) {
		t.Fatal("the answer shows the PartnerGameToken")
	}
	e.linkAnnotated(t, "gi-whole", a.GameServers()[0]).expect(t, http.StatusOK, "")

	for _, tc := range []struct {
		name   string
		script []agonesemu.Answer
		add    int
		want   []string
	}{
		{"429 falls back", nil, 0, []string{"eu-baremetal:429:agones", "us-west:200:gamefabric"}},
		{"409 asked again", []agonesemu.Answer{{Status: 409, Message: agonesemu.MsgContention}, {Status: 409, Message: agonesemu.MsgContention}}, 1,
			[]string{"eu-baremetal:409:agones", "eu-baremetal:409:agones", "eu-baremetal:200:agones"}},
		{"409 at most twice", []agonesemu.Answer{{Status: 409}, {Status: 409}, {Status: 409}, {}}, 0,
			[]string{"eu-baremetal:409:agones", "eu-baremetal:409:agones", "eu-baremetal:409:agones", "us-west:200:gamefabric"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addAgonesServers(a, tc.add, 0)
			a.Queue(tc.script...)
			before := len(a.Calls())
			id := "gi-" + strings.ReplaceAll(tc.name, " ", "-")
			r := e.allocate(t, agonesBody(id, "")).expect(t, http.StatusCreated, "")
			if got := kinds(r); !reflect.DeepEqual(got, tc.want) || len(a.Calls())-before != len(tc.want)-strings.Count(strings.Join(tc.want, " "), "us-west") {
				t.Fatalf("attempts %v (Agones asked %d times), want %v", got, len(a.Calls())-before, tc.want)
			}
		})
	}
	if n := len(a.Allocations()); n != 2 {
		t.Fatalf("%d Agones allocations, want 2", n)
	}
	e.requireRegionHealthy(t)
}

// Credentials the allocator or we refuse, or cannot read: the attempt says
// so, the GameFabric region behind it serves, nothing reaches Agones'
// allocation and its region's health is untouched. Each case rotates the
// TLS secret (a refusal drops the cached identity, so the next call reads it).
func TestAgonesCredentialsRefusedCleanly(t *testing.T) {
	a := startAgones(t, agonesemu.Config{})
	addAgonesServers(a, 1, 0)
	other, _ := agonesemu.NewCA("another CA")
	secret := func(issuer, trust *agonesemu.CA, until time.Time) string {
		s, err := issuer.ClientSecret(trust, until)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := secret(a.CA, a.CA, time.Now().Add(time.Hour))
	// A certificate with another certificate's key.
	mismatched := withKey(t, good, secretKey(secret(a.CA, a.CA, time.Now().Add(time.Hour))))
	cases := []struct{ name, secret, says string }{
		{"wrong CA", secret(a.CA, other, time.Now().Add(time.Hour)), "TLS handshake with the Agones allocator failed"},
		{"client certificate of another CA", secret(other, a.CA, time.Now().Add(time.Hour)), "TLS handshake with the Agones allocator failed"},
		{"expired client certificate", secret(a.CA, a.CA, time.Now().Add(-time.Minute)), "not tried: the Allocator's TLS credentials could not be read"},
		{"not the JSON", "-----BEGIN CERTIFICATE-----", "not tried: the Allocator's TLS credentials could not be read"},
		{"certificate not its key's", mismatched, "not tried: the Allocator's TLS credentials could not be read"},
	}
	o := &agonesOptions{allocator: a, secret: cases[0].secret}
	e := newEnv(t, envOptions{agones: o, fallbackRegion: "us-west"})
	e.stub.Always("us-west", gfemu.Answer{})
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			putSecret(t, o.secretARN, tc.secret)
			e.refusedCleanly(t, fmt.Sprintf("gi-cred-%d", i), tc.says, tc.secret)
		})
	}
	if len(a.Calls()) != 0 {
		t.Fatalf("a refused client reached the allocation: %+v", a.Calls())
	}
	// An allocator that asks for no client certificate is refused too.
	open := startAgones(t, agonesemu.Config{NoClientAuth: true})
	addAgonesServers(open, 1, 0)
	e = newEnv(t, envOptions{agones: &agonesOptions{allocator: open}, fallbackRegion: "us-west"})
	e.stub.Always("us-west", gfemu.Answer{})
	e.refusedCleanly(t, "gi-open", "did not ask for a client certificate", "")
	if len(open.Calls()) != 0 {
		t.Fatal("a request was sent to an allocator without mutual TLS")
	}
}

// refusedCleanly: id falls back to us-west past an agonesRegion attempt
// saying says, without a 500 or a region fault, and no key in the answer.
func (e *env) refusedCleanly(t *testing.T, id, says, secret string) {
	t.Helper()
	r := e.allocate(t, agonesBody(id, "")).expect(t, http.StatusCreated, "")
	first := r.attempts()[0]
	if msg, _ := first["error"].(string); r.Body["region"] != "us-west" || first["region"] != agonesRegion || first["status"] != float64(0) ||
		first["allocatorKind"] != "agones" || !strings.Contains(msg, says) {
		t.Fatalf("got %s, want an %s attempt saying %q, then us-west", r.Raw, agonesRegion, says)
	}
	if k := secretKey(secret); len(k) > 80 && strings.Contains(r.Raw, k[40:80]) {
		t.Fatal("the answer shows the client key")
	}
	e.requireRegionHealthy(t)
}

// The faults of an answer: each gets a defined code and a clear attempt,
// never a 500, and nothing is allocated twice. A hung answer may have
// allocated: the claim stays in doubt.
func TestAgonesBadAnswers(t *testing.T) {
	a := startAgones(t, agonesemu.Config{})
	e := newEnv(t, envOptions{agones: &agonesOptions{allocator: a}, attemptTimeout: 300 * time.Millisecond})
	huge := `{"gameServerName":"gs","address":"127.0.0.1","ports":[{"name":"game","port":7000}],"nodeName":"` + strings.Repeat("n", 1<<20) + `"}`
	for i, tc := range []struct {
		name         string
		answer       agonesemu.Answer
		status       int
		code, errHas string
	}{
		{"hung", agonesemu.Answer{Delay: 3 * time.Second}, 503, "SERVICE_UNAVAILABLE", "no answer before the attempt timeout"},
		{"huge", agonesemu.Answer{RawBody: huge}, 502, "UPSTREAM_INVALID_RESPONSE", "exceeds"},
		{"ports empty", agonesemu.Answer{RawBody: `{"gameServerName":"gs","address":"127.0.0.1","ports":[]}`}, 502, "UPSTREAM_INVALID_RESPONSE", "no ports"},
		{"port out of range", agonesemu.Answer{RawBody: `{"gameServerName":"gs","address":"127.0.0.1","ports":[{"name":"game","port":70000}]}`},
			502, "UPSTREAM_INVALID_RESPONSE", "1-65535"},
		{"address missing", agonesemu.Answer{RawBody: `{"gameServerName":"gs","addresses":[{"type":"InternalIP","address":"10.0.0.1"}],"ports":[{"name":"game","port":7000}]}`},
			502, "UPSTREAM_INVALID_RESPONSE", "no address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.Queue(tc.answer)
			r := e.allocate(t, agonesBody(fmt.Sprintf("gi-bad-%d", i), "")).expect(t, tc.status, tc.code)
			if msg, _ := r.attempts()[0]["error"].(string); len(r.attempts()) != 1 || !strings.Contains(msg, tc.errHas) || len(r.Raw) > 16<<10 {
				t.Fatalf("got %.2000s, want one attempt saying %q", r.Raw, tc.errHas)
			}
		})
	}
	if len(a.Calls()) != 5 || len(a.Allocations()) != 0 {
		t.Fatalf("%d calls, %d allocations: want each answer asked for once, nothing allocated", len(a.Calls()), len(a.Allocations()))
	}
}

// The same game instance asked for 20 times at once: one Agones allocation.
func TestAgonesSameInstanceAtOnce(t *testing.T) {
	a := startAgones(t, agonesemu.Config{})
	addAgonesServers(a, 3, 0)
	e := newEnv(t, envOptions{agones: &agonesOptions{allocator: a}})
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.allocate(t, agonesBody("gi-once", "")).Status })
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusOK, http.StatusConflict:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	if created != 1 || len(a.Allocations()) != 1 {
		t.Fatalf("%d created, %d Agones allocations (statuses %v), want one each", created, len(a.Allocations()), statuses)
	}
}

// Agones allocates, annotates the GameServer, and the answer is lost: the
// claim stays in doubt (no second allocation, here or on a retry), and the
// game server, reading its payload from the annotations through the SDK
// server, links with the annotated token: Linked, recovered by link.
func TestAgonesAnswerLostAfterAllocating(t *testing.T) {
	const lease = 10 * time.Second
	clk := harness.NewClock(time.Now().UTC())
	a := startAgones(t, agonesemu.Config{})
	sdk, err := a.StartSDK(agonesemu.GameServer{Labels: agonesLabels, Ports: []agones.Port{{Name: "game", Port: 7300}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Close() })
	gsSDK := &gameserver.AgonesSDK{URL: sdk.URL, Prefix: agonesPrefix}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := gsSDK.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{agones: &agonesOptions{allocator: a}, lease: lease, now: clk.Now})
	a.Queue(agonesemu.Answer{LoseAnswer: true})
	body := agonesBody("gi-lost", "")
	r := e.allocate(t, body).expect(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	if first := r.attempts()[0]; first["suspectedOrphan"] != true || first["allocatorKind"] != "agones" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("lost answer = %s", r.Raw)
	}
	e.allocate(t, body).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
	clk.Advance(lease + time.Second) // in doubt: still no second allocation
	e.allocate(t, body).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
	if n := len(a.Allocations()); n != 1 || e.state(t, "gi-lost") != "Allocating" {
		t.Fatalf("%d Agones allocations, state %s; want 1, Allocating", n, e.state(t, "gi-lost"))
	}

	p, err := gsSDK.WaitForPayload(ctx, "", 10*time.Millisecond)
	if err != nil || p.GameInstanceID != "gi-lost" {
		t.Fatalf("payload %+v, %v", p, err)
	}
	logs := &testkit.SyncBuffer{}
	inst, err := e.sdkClient(t, p, logs).Link(ctx, gameserver.LinkRequest{Address: "127.0.0.1:7300", Ports: map[string]int{"game": 7300}})
	if err != nil || inst.State != "Linked" {
		t.Fatalf("link: %+v, %v", inst, err)
	}
	r = e.allocate(t, body).expect(t, http.StatusOK, "")
	if r.Body["state"] != "Linked" || r.Body["recoveredByLink"] != true || serverAddress(r) != "127.0.0.1:7300" || len(a.Allocations()) != 1 {
		t.Fatalf("after the link = %s (%d Agones allocations)", r.Raw, len(a.Allocations()))
	}
}
