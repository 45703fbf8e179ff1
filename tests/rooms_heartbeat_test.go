//go:build integration

package tests

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// One heartbeat loop serves a whole rooms server: gi-1's heartbeat with
// allSessions keeps gi-2 alive through ten minutes of sweeps (written
// first, or read first and written once a period), lists the sessions it
// found, and leaves one that never linked to the sweep; the rooms balance.
func TestRoomsOneHeartbeatForAllSessions(t *testing.T) {
	for _, readFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("readFirst=", readFirst), func(t *testing.T) {
			clk := harness.NewClock(time.Now().UTC())
			e, cb, addr := roomsEnv(t, envOptions{now: clk.Now}, 4)
			e.lifecycle.ReadBeforeHeartbeat = readFirst
			p := e.lifecycle.Policy
			for _, id := range []string{"gi-2", "gi-3", "gi-4"} {
				e.allocateIn(t, id, "us-west", "").expect(t, http.StatusCreated, "")
			}
			e.linkAsSession(t, cb.payloadOf(t, "gi-2")).expect(t, http.StatusOK, "")
			e.linkAsSession(t, cb.payloadOf(t, "gi-3")).expect(t, http.StatusOK, "")
			e.do(t, http.MethodDelete, "/v1/allocations/gi-3", "").expect(t, http.StatusOK, "") // its room is given back

			step := p.Period / 3
			if !readFirst {
				step = p.Period
			}
			for at := step; at <= 10*time.Minute; at += step {
				clk.Advance(step)
				r := e.server(t, "heartbeat", "gi-1", `{"allSessions":true}`).expect(t, http.StatusOK, "")
				got := map[string]string{}
				sessions, _ := r.Body["sessions"].([]any)
				for _, s := range sessions {
					m := s.(map[string]any)
					got[m["gameInstanceId"].(string)] = m["state"].(string)
				}
				if got["gi-2"] != "Linked" || got["gi-3"] != "" || got["gi-1"] != "" || len(got) > 2 {
					t.Fatalf("at %v the heartbeat listed %v (%s)", at, got, r.Raw)
				}
				if _, err := e.lifecycle.Sweep(context.Background()); err != nil {
					t.Fatal(err)
				}
				rec, err := e.store.Get(context.Background(), "gi-2")
				if err != nil {
					t.Fatal(err)
				}
				if lag := clk.Now().Sub(rec.LastHeartbeatAt); at > p.InitialDelay+p.Period && lag >= p.Period {
					t.Fatalf("at %v gi-2's recorded heartbeat lags %v", at, lag)
				}
			}
			for id, want := range map[string]string{"gi-1": "Linked", "gi-2": "Linked", "gi-3": "Ended", "gi-4": "Unhealthy"} {
				if got := e.state(t, id); got != want {
					t.Errorf("%s is %s, want %s", id, got, want)
				}
			}
			if gs := e.gameServer(t, addr); len(gs.Sessions) != 2 || gs.ClosedReason != gameinstance.ClosedSessionUnhealthy {
				t.Errorf("game server holds %v (closed: %q), want gi-1 and gi-2, closed for gi-4", gs.Sessions, gs.ClosedReason)
			}
			e.requireRoomsBalance(t)
		})
	}
}

// A renewal saved with its reply lost: the SDK's retry fails its condition
// against the renewal itself and recognises it, so the call answers 200,
// the session is listed Linked and its record moved on by one version, not
// two.
func TestRoomsRenewalReplyLost(t *testing.T) {
	proxy := newReplyLoss(t, stack.ddbEndpoint)
	e, cb, _ := roomsEnv(t, envOptions{ddbEndpoint: proxy.Endpoint()}, 4)
	e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
	e.linkAsSession(t, cb.payloadOf(t, "gi-2")).expect(t, http.StatusOK, "")
	before, _ := strconv.Atoi(num(e.rawItem(t, "gi-2"), "version"))
	rule := proxy.Lose("UpdateItem", "roomServer = :room", 1)
	r := e.server(t, "heartbeat", "gi-1", `{"allSessions":true}`).expect(t, http.StatusOK, "")
	if lost := proxy.Lost(rule); lost != 1 {
		t.Fatalf("%d replies lost, want 1: the renewal was not the write called", lost)
	}
	if sessions, _ := r.Body["sessions"].([]any); len(sessions) != 1 || sessions[0].(map[string]any)["state"] != "Linked" {
		t.Fatalf("answer %s, want gi-2 listed Linked", r.Raw)
	}
	after := e.rawItem(t, "gi-2")
	if v, _ := strconv.Atoi(num(after, "version")); v != before+1 || str(after, "lastHeartbeatAt") == "" {
		t.Fatalf("gi-2 at version %d (was %d), lastHeartbeatAt %q; want one renewal recorded", v, before, str(after, "lastHeartbeatAt"))
	}
	e.requireRoomsBalance(t)
}
