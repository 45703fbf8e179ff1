//go:build integration

package tests

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func tokenFor(id string) string { return "partner-token-for-" + id + "-0123456789" }

// allocated allocates id with a known partner token.
func (e *env) allocated(t *testing.T, id string) {
	t.Helper()
	e.allocate(t, fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":"us-west","partnerGameToken":%q}`, id, tokenFor(id))).
		expect(t, http.StatusCreated, "")
}

func (e *env) server(t *testing.T, call, id, body string) response {
	t.Helper()
	return e.doAuth(t, http.MethodPost, "/v1/game-instances/"+id+"/"+call, "Bearer "+tokenFor(id), body)
}

func (e *env) state(t *testing.T, id string) string {
	t.Helper()
	return str(e.rawItem(t, id), "state")
}

func TestLifecycleStateMachine(t *testing.T) {
	clk := harness.NewClock(time.Now().UTC())
	e := newEnv(t, envOptions{now: clk.Now})
	e.stub.Always("us-west", gfemu.Answer{})
	e.stub.Always("nowhere", gfemu.Answer{Status: 503})

	// One game instance in each state, reached through the real calls.
	setups := map[string]func(id string){
		"Allocated": func(id string) { e.allocated(t, id) },
		"Linked": func(id string) {
			e.allocated(t, id)
			e.server(t, "link", id, "").expect(t, 200, "")
			// Past the initial delay and a period: a heartbeat is due.
			clk.Set(clk.Now().Add(e.lifecycle.Policy.InitialDelay + e.lifecycle.Policy.Period))
		},
		"Ended": func(id string) { e.allocated(t, id); e.server(t, "end", id, "").expect(t, 200, "") },
		"Unhealthy": func(id string) {
			e.allocated(t, id)
			rec, err := e.store.Get(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if next, _ := e.lifecycle.Policy.Review(rec, rec.UpdatedAt.Add(time.Hour)); next.State != gameinstance.StateUnhealthy {
				t.Fatal("setup: not due")
			}
			clk.Set(clk.Now().Add(time.Hour))
			if _, err := e.lifecycle.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			clk.Set(clk.Now().Add(-time.Hour))
		},
		"Failed": func(id string) {
			e.allocate(t, fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":"nowhere","partnerGameToken":%q}`, id, tokenFor(id))).expect(t, 503, "NO_CAPACITY")
		},
		"Allocating": func(id string) {
			now := clk.Now()
			if _, err := e.store.Claim(context.Background(), gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocating,
				ClaimID: "c", PartnerGameTokenHash: gameinstance.HashToken(tokenFor(id)), LeaseExpiresAt: now.Add(time.Minute),
				CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}, now); err != nil {
				t.Fatal(err)
			}
		},
	}
	type outcome struct {
		status int
		code   string
		after  string
	}
	tests := []struct {
		from string
		want map[string]outcome // call -> outcome
	}{
		{"Allocating", map[string]outcome{"link": {409, "ALLOCATION_IN_PROGRESS", "Allocating"}, "heartbeat": {409, "ALLOCATION_IN_PROGRESS", "Allocating"}, "end": {409, "ALLOCATION_IN_PROGRESS", "Allocating"}, "delete": {409, "ALLOCATION_IN_PROGRESS", "Allocating"}}},
		{"Failed", map[string]outcome{"link": {409, "INVALID_STATE", "Failed"}, "heartbeat": {409, "INVALID_STATE", "Failed"}, "end": {409, "INVALID_STATE", "Failed"}, "delete": {409, "INVALID_STATE", "Failed"}}},
		{"Allocated", map[string]outcome{"link": {200, "", "Linked"}, "heartbeat": {409, "INVALID_STATE", "Allocated"}, "end": {200, "", "Ended"}, "delete": {200, "", "Ended"}}},
		{"Linked", map[string]outcome{"link": {200, "", "Linked"}, "heartbeat": {200, "", "Linked"}, "end": {200, "", "Ended"}, "delete": {200, "", "Ended"}}},
		{"Unhealthy", map[string]outcome{"link": {409, "INVALID_STATE", "Unhealthy"}, "heartbeat": {200, "", "Unhealthy"}, "end": {200, "", "Ended"}, "delete": {200, "", "Ended"}}},
		{"Ended", map[string]outcome{"link": {409, "INVALID_STATE", "Ended"}, "heartbeat": {200, "", "Ended"}, "end": {200, "", "Ended"}, "delete": {200, "", "Ended"}}},
	}
	for _, tc := range tests {
		for _, call := range []string{"link", "heartbeat", "end", "delete"} {
			want := tc.want[call]
			t.Run(tc.from+"/"+call, func(t *testing.T) {
				id := unique("gi-" + strings.ToLower(tc.from))
				setups[tc.from](id)
				if got := e.state(t, id); got != tc.from {
					t.Fatalf("setup reached %s, want %s", got, tc.from)
				}
				before := e.rawItem(t, id)
				var r response
				if call == "delete" {
					r = e.do(t, http.MethodDelete, "/v1/allocations/"+id, "")
				} else {
					r = e.server(t, call, id, "")
				}
				r.expect(t, want.status, want.code)
				if want.code == "ALLOCATION_IN_PROGRESS" && r.Header.Get("Retry-After") == "" {
					t.Fatalf("ALLOCATION_IN_PROGRESS without Retry-After")
				}
				if got := e.state(t, id); got != want.after {
					t.Fatalf("state after %s = %s, want %s", call, got, want.after)
				}
				if want.status == 409 && r.Body["error"].(map[string]any)["state"] != tc.from {
					t.Fatalf("409 does not name the current state: %s", r.Raw)
				}
				if want.status == 200 && call != "delete" && r.Body["state"] != want.after {
					t.Fatalf("answer state = %v, want %s", r.Body["state"], want.after)
				}
				// Only a real change writes: idempotent and rejected calls leave
				// the version alone (a Linked heartbeat is a change).
				wrote := num(e.rawItem(t, id), "version") != num(before, "version")
				if want.after == tc.from && wrote != (call == "heartbeat" && tc.from == "Linked") {
					t.Fatalf("%s on %s wrote=%v", call, tc.from, wrote)
				}
			})
		}
	}
}

func TestLinkBackTokens(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	e := newEnv(t, envOptions{logs: logs})
	e.stub.Always("us-west", gfemu.Answer{})
	e.allocated(t, "gi-tok")

	missing := e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-tok/link", "", "").expect(t, 401, "UNAUTHORIZED")
	if missing.Header.Get("WWW-Authenticate") == "" {
		t.Fatal("401 without WWW-Authenticate")
	}
	wrong := e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-tok/link", "Bearer "+tokenFor("someone-else"), "").expect(t, 401, "UNAUTHORIZED")
	unknown := e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-nope/link", "Bearer "+tokenFor("gi-nope"), "").expect(t, 401, "UNAUTHORIZED")
	if wrong.Raw != unknown.Raw {
		t.Fatalf("a wrong token and an unknown instance answer differently, revealing which instances exist:\n%s\n%s", wrong.Raw, unknown.Raw)
	}
	e.do(t, http.MethodDelete, "/v1/allocations/gi-nope", "").expect(t, 404, "NOT_FOUND")
	if e.state(t, "gi-tok") != "Allocated" {
		t.Fatal("a rejected link changed the instance")
	}

	linked := e.server(t, "link", "gi-tok", `{"address":"127.0.0.1:7001","ports":{"game":7001},"serverName":"s-1"}`).expect(t, 200, "")
	if linked.Body["state"] != "Linked" || linked.Body["linkedAt"] == nil {
		t.Fatalf("link answer = %s", linked.Raw)
	}
	e.server(t, "heartbeat", "gi-tok", "").expect(t, 200, "")
	got := e.do(t, http.MethodGet, "/v1/allocations/gi-tok", "").expect(t, 200, "")
	server, _ := got.Body["linkedServer"].(map[string]any)
	if got.Body["lastHeartbeatAt"] == nil || server["serverName"] != "s-1" {
		t.Fatalf("GET after link and heartbeat = %s", got.Raw)
	}
	e.server(t, "end", "gi-tok", `{"reason":"IWON"}`).expect(t, 200, "")
	ended := e.do(t, http.MethodGet, "/v1/allocations/gi-tok", "").expect(t, 200, "")
	if ended.Body["endedAt"] == nil || ended.Body["endReason"] != "IWON" || ended.Body["state"] != "Ended" {
		t.Fatalf("GET after end = %s", ended.Raw)
	}
	if item := e.rawItem(t, "gi-tok"); item["expiresAt"] == nil || item["healthShard"] != nil {
		t.Fatalf("an Ended record must carry a TTL and leave the health index: %v", item)
	}

	// Nothing a game server sent as its credential reaches the logs.
	out := logs.String()
	if !strings.Contains(out, `"path":"/v1/game-instances/gi-tok/end"`) {
		t.Fatalf("logs were not captured: %q", out)
	}
	for _, secret := range []string{tokenFor("gi-tok"), tokenFor("someone-else"), tokenFor("gi-nope")} {
		if strings.Contains(out, secret) {
			t.Fatalf("logs contain a partner token")
		}
	}
}

// Links and ends racing on one instance: every answer is legal and the
// instance ends Ended, never back in Linked.
func TestConcurrentLinkAndEnd(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.stub.Always("us-west", gfemu.Answer{})
	for round := range 3 {
		id := fmt.Sprintf("gi-race-%d", round)
		e.allocated(t, id)
		var wg sync.WaitGroup
		results := make(chan string, 40)
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				call := []string{"link", "end", "heartbeat"}[i%3]
				r := e.server(t, call, id, "")
				results <- fmt.Sprintf("%s:%d:%s:%v", call, r.Status, r.code(), r.Body["state"])
			}()
		}
		wg.Wait()
		close(results)
		for r := range results {
			legal := strings.HasPrefix(r, "link:200::Linked") || r == "link:409:INVALID_STATE:<nil>" ||
				r == "end:200::Ended" || strings.HasPrefix(r, "heartbeat:200::") || r == "heartbeat:409:INVALID_STATE:<nil>"
			if !legal {
				t.Errorf("round %d: illegal answer %s", round, r)
			}
		}
		if got := e.state(t, id); got != "Ended" {
			t.Fatalf("round %d: final state %s, want Ended", round, got)
		}
	}
}

// The sweeper marks exactly the due instances among many, and only once.
func TestHealthSweepFindsExactlyTheDue(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := harness.NewClock(t0)
	e := newEnv(t, envOptions{now: clk.Now})
	e.stub.Always("us-west", gfemu.Answer{})
	group := func(prefix string, n int, then func(id string)) []string {
		var ids []string
		for i := range n {
			id := fmt.Sprintf("%s-%02d", prefix, i)
			e.allocated(t, id)
			if then != nil {
				then(id)
			}
			ids = append(ids, id)
		}
		return ids
	}
	link := func(id string) { e.server(t, "link", id, "").expect(t, 200, "") }
	neverLinked := group("never-linked", 8, nil)   // due at t0+2m
	silent := group("silent", 8, link)             // linked at t0, due at t0+30s+90s
	heartbeating := group("heartbeating", 8, link) // heartbeat below
	ended := group("ended", 4, func(id string) { e.server(t, "end", id, "").expect(t, 200, "") })
	clk.Set(t0.Add(100 * time.Second))
	for _, id := range heartbeating {
		e.server(t, "heartbeat", id, "").expect(t, 200, "") // due at t0+190s
	}
	fresh := group("fresh", 8, nil) // allocated at t0+100s, due at t0+220s

	clk.Set(t0.Add(150 * time.Second))
	sum, err := e.lifecycle.Sweep(context.Background())
	// A heartbeat leaves the index key where the claim put it (t0+2m), so
	// the heartbeating instances are listed too: read, found alive, left
	// where they are, never marked or moved.
	if err != nil || sum.Marked != 16 || sum.LinkTimeouts != 8 || sum.MissedHeartbeats != 8 || sum.Due != 16 || sum.Moved != 0 ||
		sum.Listed != 24 || sum.Checked != 24 {
		t.Fatalf("sweep = %+v, %v; want 24 listed and read, 16 marked: 8 link timeouts, 8 missed heartbeats", sum, err)
	}
	expectStates := func(ids []string, state, reason string) {
		t.Helper()
		for _, id := range ids {
			item := e.rawItem(t, id)
			if str(item, "state") != state || str(item, "unhealthyReason") != reason {
				t.Errorf("%s: %s/%s, want %s/%s", id, str(item, "state"), str(item, "unhealthyReason"), state, reason)
			}
		}
	}
	expectStates(neverLinked, "Unhealthy", "LinkTimeout")
	expectStates(silent, "Unhealthy", "MissedHeartbeats")
	expectStates(heartbeating, "Linked", "")
	expectStates(fresh, "Allocated", "")
	expectStates(ended, "Ended", "")

	// The warm sweep knows the heartbeating ones cannot be overdue yet.
	if sum, err := e.lifecycle.Sweep(context.Background()); err != nil || sum.Due != 0 || sum.Marked != 0 || sum.Listed != 8 || sum.Checked != 0 {
		t.Fatalf("second sweep = %+v, %v; want nothing due, nothing read", sum, err)
	}
	// A heartbeat does not revive an Unhealthy instance.
	if r := e.server(t, "heartbeat", silent[0], "").expect(t, 200, ""); r.Body["state"] != "Unhealthy" {
		t.Fatalf("heartbeat on Unhealthy = %s", r.Raw)
	}
	clk.Set(t0.Add(10 * time.Minute))
	if sum, err := e.lifecycle.Sweep(context.Background()); err != nil || sum.Marked != 16 {
		t.Fatalf("later sweep = %+v, %v; want the heartbeating and fresh ones marked", sum, err)
	}
}

// A heartbeat is written at most once per HEALTH_PERIOD when servers beat
// faster (read first), and at once when they beat once a period (write
// first); either way the recorded deadline is never more than a period
// earlier than the last heartbeat's own, and no heartbeat moves the health
// index key the link left.
func TestHeartbeatWrites(t *testing.T) {
	tests := []struct {
		name       string
		readFirst  bool
		every      time.Duration
		wantWrites int // over the 3 minutes after the initial delay
	}{
		{"read first, every 10 s", true, 10 * time.Second, 6},
		{"read first, every 30 s", true, 30 * time.Second, 6},
		{"write first, every 30 s", false, 30 * time.Second, 6},
		{"write first, every 10 s (faster than advised)", false, 10 * time.Second, 18},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := harness.NewClock(time.Now().UTC())
			e := newEnv(t, envOptions{now: clk.Now})
			e.stub.Always("us-west", gfemu.Answer{})
			e.lifecycle.ReadBeforeHeartbeat = tc.readFirst
			p := e.lifecycle.Policy
			id := unique("gi-beat")
			e.allocated(t, id)
			e.server(t, "link", id, "").expect(t, 200, "")
			key := num(e.rawItem(t, id), "healthDeadline")
			clk.Set(clk.Now().Add(p.InitialDelay))
			writes := 0
			for at := tc.every; at <= 3*time.Minute; at += tc.every {
				clk.Set(clk.Now().Add(tc.every))
				before := num(e.rawItem(t, id), "version")
				r := e.server(t, "heartbeat", id, "")
				r.expect(t, 200, "")
				if r.Body["state"] != "Linked" {
					t.Fatalf("answer %s", r.Raw)
				}
				if num(e.rawItem(t, id), "version") != before {
					writes++
				}
				if k := num(e.rawItem(t, id), "healthDeadline"); k != key {
					t.Fatalf("at %v a heartbeat moved the index key from %s to %s", at, key, k)
				}
				rec, err := e.store.Get(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				deadline := rec.LastHeartbeatAt
				if deadline.IsZero() || deadline.Before(rec.LinkedAt.Add(p.InitialDelay)) {
					deadline = rec.LinkedAt.Add(p.InitialDelay)
				}
				if lag := clk.Now().Sub(deadline); lag >= p.Period {
					t.Fatalf("at %v the recorded heartbeat lags %v (a period at most)", at, lag)
				}
			}
			if writes != tc.wantWrites {
				t.Fatalf("%d writes, want %d", writes, tc.wantWrites)
			}
		})
	}
}
