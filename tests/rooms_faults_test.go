//go:build integration

package tests

import (
	"context"
	"encoding/json"
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

// roomsEnv is an env whose gi-1 linked offering capacity rooms on cb: the
// first room's game server.
func roomsEnv(t *testing.T, o envOptions, capacity int) (*env, *sessionServer, string) {
	t.Helper()
	e := newEnv(t, o)
	e.stub.Always("us-west", gfemu.Answer{})
	cb := newSessionServer(t)
	addr := serverAddress(e.allocate(t, `{"gameInstanceId":"gi-1","desiredRegion":"us-west","partnerGameToken":"`+tokenFor("gi-1")+`"}`).
		expect(t, http.StatusCreated, ""))
	e.linkRooms(t, "gi-1", capacity, cb).expect(t, http.StatusOK, "")
	return e, cb, addr
}

// A session callback that fails gives the room back and the allocation
// goes on to the region's Allocator; the attempt says what happened; two
// failures in a row close the server to new sessions.
func TestRoomCallbackFaults(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name    string
		break_  func(*sessionServer)
		status  float64
		orphan  bool
		errText string
	}{
		{"hangs", func(cb *sessionServer) { cb.answer(200, 5*time.Second) }, 0, true, "no answer within 300ms"},
		{"answers 500", func(cb *sessionServer) { cb.answer(500, 0) }, 500, false, "answered 500 Internal Server Error"},
		{"refuses the token", func(cb *sessionServer) { cb.answer(401, 0) }, 401, false, "answered 401"},
		{"answers after the timeout", func(cb *sessionServer) { cb.answer(200, 2*timeout) }, 0, true, "no answer within"},
		{"is gone", func(cb *sessionServer) { cb.srv.Close() }, 0, false, "not delivered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, cb, addr := roomsEnv(t, envOptions{roomCallback: timeout}, 4)
			tc.break_(cb)
			r := e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
			attempts := r.attempts()
			if r.Body["placement"] != "allocator" || len(attempts) != 2 || attempts[0]["placement"] != "room" || attempts[0]["server"] != addr ||
				attempts[0]["status"] != tc.status || (attempts[0]["suspectedOrphan"] == true) != tc.orphan ||
				!strings.Contains(fmt.Sprint(attempts[0]["error"]), tc.errText) || attempts[1]["status"] != float64(200) {
				t.Fatalf("answer %s", r.Raw)
			}
			noTokens(t, r.Raw)
			if gs := e.gameServer(t, addr); gs.InUse != 1 || gs.CallbackFailures != 1 || !gs.Accepting {
				t.Fatalf("after one failed callback: %d in use, %d failures, accepting %v", gs.InUse, gs.CallbackFailures, gs.Accepting)
			}
			if tc.name == "answers after the timeout" {
				// The server took the session late: its token is not the
				// instance's, so that session cannot link.
				testkit.WaitFor(t, 5*time.Second, "the late callback to arrive", func() bool { return len(cb.sessions()) == 1 })
				e.linkAsSession(t, cb.payloadOf(t, "gi-2")).expect(t, http.StatusUnauthorized, "UNAUTHORIZED")
			}
			// A second failure in a row closes it: nobody is called after.
			e.allocateIn(t, "gi-3", "us-west", "").expect(t, http.StatusCreated, "")
			if gs := e.gameServer(t, addr); gs.Accepting || gs.ClosedReason != gameinstance.ClosedCallbackFailures || gs.InUse != 1 {
				t.Fatalf("after two failed callbacks: accepting %v (%s), %d in use", gs.Accepting, gs.ClosedReason, gs.InUse)
			}
			calls := len(cb.sessions())
			if r := e.allocateIn(t, "gi-4", "us-west", "").expect(t, http.StatusCreated, ""); len(r.attempts()) != 1 || len(cb.sessions()) != calls {
				t.Fatalf("a closed server was called: %s", r.Raw)
			}
			e.requireRoomsBalance(t)
		})
	}
	t.Run("a success ends the run of failures", func(t *testing.T) {
		e, cb, addr := roomsEnv(t, envOptions{roomCallback: timeout}, 4)
		cb.answer(503, 0)
		e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
		cb.answer(200, 0)
		e.allocateIn(t, "gi-3", "us-west", "").expect(t, http.StatusCreated, "")
		cb.answer(503, 0)
		e.allocateIn(t, "gi-4", "us-west", "").expect(t, http.StatusCreated, "")
		if gs := e.gameServer(t, addr); !gs.Accepting || gs.CallbackFailures != 1 || gs.InUse != 2 {
			t.Fatalf("fail, succeed, fail: accepting %v, %d failures, %d in use", gs.Accepting, gs.CallbackFailures, gs.InUse)
		}
	})
}

// k free rooms and n > k concurrent allocations: exactly k rooms, the rest
// from the Allocator, every room counted once.
func TestRoomsConcurrentAllocations(t *testing.T) {
	e, cb, addr := roomsEnv(t, envOptions{}, 4) // 3 free rooms
	const n = 50
	var wg sync.WaitGroup
	placements := make([]string, n)
	for i := range n {
		wg.Go(func() {
			placements[i] = allocateQuietly(e, fmt.Sprintf("gi-c%02d", i))
		})
	}
	wg.Wait()
	rooms, allocator := 0, 0
	for i, p := range placements {
		switch p {
		case "room":
			rooms++
		case "allocator":
			allocator++
		default:
			t.Errorf("gi-c%02d: %s", i, p)
		}
	}
	if rooms != 3 || allocator != n-3 || len(cb.sessions()) != 3 {
		t.Fatalf("%d in rooms, %d from the Allocator, %d callbacks; want 3, %d, 3", rooms, allocator, len(cb.sessions()), n-3)
	}
	if inUse := e.requireRoomsBalance(t); inUse[addr] != 4 {
		t.Fatalf("rooms in use %v", inUse)
	}
}

// allocateQuietly allocates id in us-west from any goroutine: its
// placement, or what went wrong.
func allocateQuietly(e *env, id string) string {
	req, _ := http.NewRequest(http.MethodPost, e.api.URL+"/v1/allocations", strings.NewReader(fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":"us-west"}`, id)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusCreated {
		return fmt.Sprintf("status %d: %v", resp.StatusCode, doc)
	}
	return fmt.Sprint(doc["placement"])
}

// The same allocation twice at once calls one server once: one room.
func TestRoomsSameAllocationTwiceAtOnce(t *testing.T) {
	e, cb, addr := roomsEnv(t, envOptions{}, 4)
	cb.answer(200, 200*time.Millisecond) // both requests are in flight together
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, e.api.URL+"/v1/allocations", strings.NewReader(`{"gameInstanceId":"gi-2","desiredRegion":"us-west"}`))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if len(cb.sessions()) != 1 {
		t.Fatalf("%d callbacks for one instance (answers %v)", len(cb.sessions()), statuses)
	}
	e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusOK, "")
	if inUse := e.requireRoomsBalance(t); inUse[addr] != 2 {
		t.Fatalf("rooms in use %v, want 2", inUse)
	}
}

// A game server that dies with rooms in use: its sessions stop
// heartbeating, the sweep marks them Unhealthy, gives their rooms back and
// closes the server, and no allocation is sent there again.
func TestRoomsServerDies(t *testing.T) {
	clk := harness.NewClock(time.Now().UTC())
	e, cb, addr := roomsEnv(t, envOptions{now: clk.Now}, 4)
	e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
	e.linkAsSession(t, cb.payloadOf(t, "gi-2")).expect(t, http.StatusOK, "")
	e.allocateIn(t, "gi-3", "us-west", "").expect(t, http.StatusCreated, "") // never links
	if inUse := e.requireRoomsBalance(t); inUse[addr] != 3 {
		t.Fatalf("rooms in use %v, want 3", inUse)
	}
	clk.Advance(10 * time.Minute)
	sum, err := e.lifecycle.Sweep(context.Background())
	if err != nil || sum.Marked != 3 {
		t.Fatalf("sweep = %+v, %v; want 3 marked", sum, err)
	}
	gs := e.gameServer(t, addr)
	if gs.InUse != 0 || gs.Accepting || gs.ClosedReason != gameinstance.ClosedSessionUnhealthy {
		t.Fatalf("after the sweep: %d in use, accepting %v (%s)", gs.InUse, gs.Accepting, gs.ClosedReason)
	}
	if r := e.allocateIn(t, "gi-4", "us-west", "").expect(t, http.StatusCreated, ""); r.Body["placement"] != "allocator" || len(cb.sessions()) != 2 {
		t.Fatalf("after the server died: %s", r.Raw)
	}
	e.requireRoomsBalance(t)
}

// A session ended twice at once (its server and the backend) gives its
// room back once.
func TestRoomsEndedTwiceConcurrently(t *testing.T) {
	e, cb, addr := roomsEnv(t, envOptions{}, 4)
	e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
	session := cb.payloadOf(t, "gi-2")
	e.linkAsSession(t, session).expect(t, http.StatusOK, "")
	var wg sync.WaitGroup
	statuses := make([]int, 4)
	for i := range statuses {
		wg.Go(func() {
			var req *http.Request
			if i%2 == 0 {
				req, _ = http.NewRequest(http.MethodPost, e.api.URL+"/v1/game-instances/gi-2/end", strings.NewReader(`{"reason":"IWON"}`))
				req.Header.Set("Authorization", "Bearer "+session.PartnerGameToken)
				req.Header.Set("Content-Type", "application/json")
			} else {
				req, _ = http.NewRequest(http.MethodDelete, e.api.URL+"/v1/allocations/gi-2", nil)
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("end %d answered %d", i, s)
		}
	}
	if inUse := e.requireRoomsBalance(t); inUse[addr] != 1 || e.state(t, "gi-2") != "Ended" {
		t.Fatalf("rooms in use %v, gi-2 %s", inUse, e.state(t, "gi-2"))
	}
}

// DynamoDB fails right after a game server took a session: the outcome is
// not recorded and the claim stays in doubt holding the room, counted.
// Either the session links (it holds a candidate token) and keeps the
// room, or nobody does and the sweep fails the claim, giving it back.
func TestRoomsInDoubtClaim(t *testing.T) {
	const lease, linkTimeout = 10 * time.Second, 30 * time.Second
	for _, links := range []bool{true, false} {
		t.Run(fmt.Sprintf("session links: %v", links), func(t *testing.T) {
			clk := harness.NewClock(time.Now().UTC())
			proxy := newFaultProxy(t, stack.ddbEndpoint)
			e, cb, addr := roomsEnv(t, envOptions{now: clk.Now, lease: lease, linkTimeout: linkTimeout, ddbEndpoint: proxy.Endpoint()}, 4)
			cb.whenCalled(func() { proxy.SetDown(true) })
			r := e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
			requireRetryAfter(t, r)
			cb.whenCalled(nil)
			proxy.SetDown(false)
			if inUse := e.requireRoomsBalance(t); inUse[addr] != 2 || e.state(t, "gi-2") != "Allocating" {
				t.Fatalf("in doubt: rooms in use %v, gi-2 %s", inUse, e.state(t, "gi-2"))
			}
			// A replay waits; it never takes a second room.
			e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
			clk.Advance(lease + time.Second)
			if links {
				linked := e.linkAsSession(t, cb.payloadOf(t, "gi-2")).expect(t, http.StatusOK, "")
				if linked.Body["state"] != "Linked" || linked.Body["recoveredByLink"] != true {
					t.Fatalf("recovering link: %s", linked.Raw)
				}
				if got := e.do(t, http.MethodGet, "/v1/allocations/gi-2", "").expect(t, http.StatusOK, ""); got.Body["placement"] != "room" ||
					serverAddress(got) != addr {
					t.Fatalf("recovered: %s", got.Raw)
				}
			} else {
				clk.Advance(linkTimeout)
				if sum, err := e.lifecycle.Sweep(context.Background()); err != nil || sum.OutcomesLost != 1 {
					t.Fatalf("sweep = %+v, %v", sum, err)
				}
				e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
			}
			if inUse := e.requireRoomsBalance(t); inUse[addr] != 2 {
				t.Fatalf("rooms in use %v, want 2", inUse)
			}
		})
	}
}

// Writes saved whose replies were lost: the SDK retries each, recognises
// it, and every room is still counted once.
func TestRoomsLostReplies(t *testing.T) {
	tests := []struct {
		name, op, contains string
		times              int // replies lost
		run                func(t *testing.T, e *env, cb *sessionServer)
	}{
		{"the take", "TransactWriteItems", "#roomServer = :addr", 1, func(t *testing.T, e *env, cb *sessionServer) {
			e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
		}},
		{"the release", "TransactWriteItems", "DELETE #sessions", 1, func(t *testing.T, e *env, cb *sessionServer) {
			e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
			e.do(t, http.MethodDelete, "/v1/allocations/gi-2", "").expect(t, http.StatusOK, "")
		}},
		{"the give-back", "UpdateItem", "#callbackFailures = if_not_exists", 1, func(t *testing.T, e *env, cb *sessionServer) {
			cb.answer(500, 0)
			e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
		}},
		{"the give-backs, the second closing", "UpdateItem", "#callbackFailures = if_not_exists", 2, func(t *testing.T, e *env, cb *sessionServer) {
			cb.answer(500, 0)
			e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
			e.allocateIn(t, "gi-3", "us-west", "").expect(t, http.StatusCreated, "")
			if gs := e.gameServer(t, serverAddress(e.do(t, http.MethodGet, "/v1/allocations/gi-1", ""))); gs.Accepting || gs.CallbackFailures != 2 {
				t.Fatalf("two failed callbacks, one give-back's reply lost: accepting %v, %d failures", gs.Accepting, gs.CallbackFailures)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			proxy := newReplyLoss(t, stack.ddbEndpoint)
			e, cb, _ := roomsEnv(t, envOptions{ddbEndpoint: proxy.Endpoint()}, 4)
			rule := proxy.Lose(tc.op, tc.contains, tc.times)
			tc.run(t, e, cb)
			if proxy.Lost(rule) != tc.times {
				t.Fatalf("lost %d replies, want %d", proxy.Lost(rule), tc.times)
			}
			e.requireRoomsBalance(t)
		})
	}
	t.Run("the joining link", func(t *testing.T) {
		proxy := newReplyLoss(t, stack.ddbEndpoint)
		e := newEnv(t, envOptions{ddbEndpoint: proxy.Endpoint()})
		e.stub.Always("us-west", gfemu.Answer{})
		cb := newSessionServer(t)
		e.allocated(t, "gi-1")
		rule := proxy.Lose("TransactWriteItems", "ADD #sessions", 1)
		e.linkRooms(t, "gi-1", 4, cb).expect(t, http.StatusOK, "")
		if proxy.Lost(rule) != 1 {
			t.Fatalf("lost %d replies, want 1", proxy.Lost(rule))
		}
		if inUse := e.requireRoomsBalance(t); len(inUse) != 1 {
			t.Fatalf("rooms in use %v", inUse)
		}
	})
}

// DynamoDB throttles a quarter of the requests, transactions included
// (cancelled with ThrottlingError): every answer is a success or a clean
// retryable error, and after retries the rooms balance.
func TestRoomsThrottled(t *testing.T) {
	proxy := newReplyLoss(t, stack.ddbEndpoint)
	e, cb, addr := roomsEnv(t, envOptions{ddbEndpoint: proxy.Endpoint()}, 6)
	proxy.Throttle(4)
	retry := func(what string, f func() (int, string)) {
		t.Helper()
		for try := 0; try < 10; try++ {
			status, raw := f()
			switch {
			case status < 300:
				return
			case status == http.StatusServiceUnavailable || status == http.StatusConflict:
				time.Sleep(100 * time.Millisecond)
				continue
			}
			t.Fatalf("%s answered %d: %s", what, status, raw)
		}
		t.Fatalf("%s never succeeded", what)
	}
	call := func(method, path, auth, body string) (int, string) {
		req, _ := http.NewRequest(method, e.api.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var doc map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		return resp.StatusCode, fmt.Sprint(doc)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id := fmt.Sprintf("gi-t%d", i)
			retry("allocate "+id, func() (int, string) {
				return call(http.MethodPost, "/v1/allocations", "", fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":"us-west"}`, id))
			})
		})
	}
	wg.Wait()
	for _, p := range cb.sessions() {
		retry("link "+p.GameInstanceID, func() (int, string) {
			return call(http.MethodPost, "/v1/game-instances/"+p.GameInstanceID+"/link", p.PartnerGameToken, "")
		})
	}
	for i := range 8 {
		id := fmt.Sprintf("gi-t%d", i)
		retry("end "+id, func() (int, string) { return call(http.MethodDelete, "/v1/allocations/"+id, "", "") })
	}
	proxy.Throttle(0)
	ops := proxy.ThrottledOps()
	if ops["TransactWriteItems"] == 0 || proxy.Throttled() < 10 {
		t.Fatalf("throttled %d requests (%v): the scenario did not exercise throttled transactions", proxy.Throttled(), ops)
	}
	if inUse := e.requireRoomsBalance(t); inUse[addr] != 1 {
		t.Fatalf("rooms in use %v, want gi-1's alone on %s", inUse, addr)
	}
}
