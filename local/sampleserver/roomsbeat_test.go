package main

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"go.uber.org/goleak"
)

// heartbeatThrough waits for an all-sessions heartbeat through id after
// the first n heartbeats, and returns how many there are then.
func (r *roomsServer) heartbeatThrough(id string, n int) int {
	r.t.Helper()
	var calls []heartbeatCall
	testkit.WaitFor(r.t, 10*time.Second, "a heartbeat through "+id, func() bool {
		calls = r.backend.heartbeatCalls()
		for _, c := range calls[min(n, len(calls)):] {
			if c.id == id {
				return true
			}
		}
		return false
	})
	for _, c := range calls {
		if !c.all {
			r.t.Fatalf("a rooms server made a heartbeat for %s alone", c.id)
		}
	}
	return len(calls)
}

// letIn delivers id's session and waits until its players may join.
func (r *roomsServer) letIn(id string) {
	r.t.Helper()
	if status := r.deliver(r.session(id, "pgt-secret-"+id)); status != http.StatusOK {
		r.t.Fatalf("%s: session callback status %d", id, status)
	}
	testkit.WaitFor(r.t, 10*time.Second, id+"'s players let in", func() bool {
		_, answer := r.join(id)
		return answer == "WELCOME "+r.serverName()+" "+id
	})
}

// Three sessions, one loop: one heartbeat per interval, through one
// session, never one per session.
func TestRoomsOneHeartbeatLoopForEverySession(t *testing.T) {
	r := startRoomsServer(t, nil)
	for _, id := range []string{"gi-43", "gi-44"} {
		r.letIn(id)
	}
	from := r.heartbeatThrough("gi-42", 0)
	const window = time.Second
	time.Sleep(window)
	calls := r.backend.heartbeatCalls()[from:]
	// Three loops would make about 3 × window / interval.
	if most := int(window/r.cfg.HeartbeatInterval) + 2; len(calls) == 0 || len(calls) > most {
		t.Fatalf("%d heartbeats in %s at %s intervals, want 1 to %d", len(calls), window, r.cfg.HeartbeatInterval, most)
	}
	for i, c := range calls {
		if !c.all || c.id != "gi-42" {
			t.Fatalf("heartbeat %+v, want all sessions through gi-42", c)
		}
		// One loop waits an interval between an answer and the next call.
		if i > 0 && c.at.Sub(calls[i-1].at) < r.cfg.HeartbeatInterval/2 {
			t.Fatalf("heartbeats %s apart at %s intervals", c.at.Sub(calls[i-1].at), r.cfg.HeartbeatInterval)
		}
	}
	for _, id := range []string{"gi-42", "gi-43", "gi-44"} {
		if _, answer := r.join(id); answer != "WELCOME "+r.serverName()+" "+id {
			t.Fatalf("JOIN %s: %q", id, answer)
		}
	}
	if n := len(regexp.MustCompile(`heartbeating every session through`).FindAllString(r.logs.String(), -1)); n != 1 {
		t.Fatalf("the loop took %d sessions to beat through, want 1", n)
	}
}

// Another session's heartbeat answer lists gi-43 Ended and gi-44
// Unhealthy: their games are over (the backend closed them: no end call),
// the server and gi-42 play on, and the loop goes on through gi-42.
func TestRoomsSessionListedOverEndsItsGameAlone(t *testing.T) {
	r := startRoomsServer(t, nil)
	r.heartbeatThrough("gi-42", 0) // the only one linked: the loop stays on it
	for _, id := range []string{"gi-43", "gi-44"} {
		r.letIn(id)
	}
	r.backend.setInstanceState("gi-43", "Ended")
	r.backend.setInstanceState("gi-44", "Unhealthy")
	testkit.WaitFor(t, 10*time.Second, "gi-43's and gi-44's games to be over", func() bool {
		_, a43 := r.join("gi-43")
		_, a44 := r.join("gi-44")
		return a43 == "GAME OVER" && a44 == "GAME OVER"
	})
	for _, want := range []string{`gi-43 .*heartbeat through gi-42 answered it Ended: game instance ended; game over`,
		`gi-44 .*heartbeat through gi-42 answered it Unhealthy: game instance unhealthy; game over`} {
		if !regexp.MustCompile(want).MatchString(r.logs.String()) {
			t.Errorf("no log line %q", want)
		}
	}
	if _, answer := r.join("gi-42"); answer != "WELCOME "+r.serverName()+" gi-42" {
		t.Fatalf("JOIN gi-42: %q", answer)
	}
	r.heartbeatThrough("gi-42", len(r.backend.heartbeatCalls()))
	r.running()
	if _, _, ends := r.backend.snapshot(); len(ends) != 0 {
		t.Fatalf("ended instances the backend had already closed: %v", ends)
	}
}

// The session the loop beats through ends (IWON): the loop moves on to
// another, and that one's heartbeats keep the server's sessions alive.
// Nothing of the loop outlives the server.
func TestRoomsHeartbeatLoopMovesOnWhenItsSessionEnds(t *testing.T) {
	before := goleak.IgnoreCurrent()
	// Registered first, so it runs last: once the fakes have closed the
	// connections the server's clients kept.
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		goleak.VerifyNone(t, before)
	})
	r := startRoomsServer(t, nil)
	r.heartbeatThrough("gi-42", 0)
	r.letIn("gi-43")
	p42, _ := r.join("gi-42")
	if _, err := p42.conn.Write([]byte("IWON\n")); err != nil {
		t.Fatal(err)
	}
	if line := p42.line(); line != "GAME OVER" {
		t.Fatalf("gi-42's winner got %q", line)
	}
	if ends := r.calls("end", "gi-42"); len(ends) != 1 || ends[0].reason != "IWON" {
		t.Fatalf("gi-42's ends %+v", ends)
	}
	r.heartbeatThrough("gi-43", len(r.backend.heartbeatCalls()))
	if _, answer := r.join("gi-43"); answer != "WELCOME "+r.serverName()+" gi-43" {
		t.Fatalf("JOIN gi-43: %q", answer)
	}
	r.running()
	r.cancel()
	if err := r.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if ends := r.calls("end", "gi-43"); len(ends) != 1 || ends[0].reason != "Terminated" {
		t.Fatalf("gi-43's ends %+v", ends)
	}
}
