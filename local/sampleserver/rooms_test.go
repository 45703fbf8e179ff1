package main

import (
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

func TestRoomsTwoSessionsEachEndsAlone(t *testing.T) {
	r := startRoomsServer(t, nil)
	_, gamePort, _ := net.SplitHostPort(r.reg.Address)
	first := r.calls("link", "gi-42")[0].link
	if first.Address != r.reg.Address || first.ServerName != r.serverName() || r.offer.Capacity != 4 ||
		!strings.HasPrefix(r.offer.CallbackURL, "http://127.0.0.1:") || !strings.HasSuffix(r.offer.CallbackURL, "/sessions") ||
		strings.Contains(r.offer.CallbackURL, ":"+gamePort+"/") || len(r.offer.CallbackToken) != 43 || r.offer.Validate() != nil {
		t.Fatalf("first link %+v offering %#v", first, r.offer)
	}

	if status := r.deliver(r.session("gi-43", "pgt-secret-43")); status != http.StatusOK {
		t.Fatalf("session callback status %d", status)
	}
	r.waitLinked("gi-43")
	if second := r.calls("link", "gi-43")[0].link; second.Rooms != nil || second.Address != r.reg.Address {
		t.Fatalf("gi-43 linked with %+v, want the shared address and no rooms", second)
	}
	testkit.WaitFor(t, 10*time.Second, "gi-43's players let in", func() bool {
		_, answer := r.join("gi-43")
		return answer == "WELCOME "+r.serverName()+" gi-43"
	})
	p42, answer := r.join("gi-42")
	if answer != "WELCOME "+r.serverName()+" gi-42" {
		t.Fatalf("JOIN gi-42: %q", answer)
	}
	p43, _ := r.join("gi-43")
	for _, tc := range []struct{ id, want string }{{"gi-44", "NO SUCH GAME"}, {"", "NO SUCH GAME"}} {
		if _, answer := r.join(tc.id); answer != tc.want {
			t.Errorf("JOIN %q: %q, want %q", tc.id, answer, tc.want)
		}
	}

	// IWON ends gi-43 alone.
	if _, err := p43.conn.Write([]byte("IWON\n")); err != nil {
		t.Fatal(err)
	}
	if line := p43.line(); line != "GAME OVER" {
		t.Fatalf("gi-43's winner got %q", line)
	}
	if ends := r.calls("end", "gi-43"); len(ends) != 1 || ends[0].reason != "IWON" || len(r.calls("end", "gi-42")) != 0 {
		t.Fatalf("ends after gi-43's IWON: %+v", ends)
	}
	if _, answer := r.join("gi-43"); answer != "GAME OVER" {
		t.Fatalf("JOIN gi-43 after its end: %q", answer)
	}
	if _, answer := r.join("gi-42"); answer != "WELCOME "+r.serverName()+" gi-42" {
		t.Fatalf("JOIN gi-42 after gi-43 ended: %q", answer)
	}
	r.running()

	// The first session ending leaves the server open.
	if _, err := p42.conn.Write([]byte("IWON\n")); err != nil {
		t.Fatal(err)
	}
	if line := p42.line(); line != "GAME OVER" {
		t.Fatalf("gi-42's winner got %q", line)
	}
	if status := r.deliver(r.session("gi-44", "pgt-secret-44")); status != http.StatusOK {
		t.Fatalf("session callback after gi-42 ended: %d", status)
	}
	r.waitLinked("gi-44")
	r.running()

	r.cancel() // SIGTERM
	if err := r.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if ends := r.calls("end", "gi-44"); len(ends) != 1 || ends[0].reason != "Terminated" {
		t.Fatalf("gi-44's ends %+v", ends)
	}
	if _, _, ends := r.backend.snapshot(); len(ends) != 3 {
		t.Fatalf("ends %v", ends)
	}
}

func TestRoomsShutdownClosesThenEndsEverySession(t *testing.T) {
	r := startRoomsServer(t, nil)
	// Its link is recorded a moment before the server lets players in.
	var p42 *player
	testkit.WaitFor(t, 10*time.Second, "gi-42's players let in", func() bool {
		var answer string
		p42, answer = r.join("gi-42")
		return answer == "WELCOME "+r.serverName()+" gi-42"
	})
	for _, id := range []string{"gi-43", "gi-44"} {
		if status := r.deliver(r.session(id, "pgt-secret-"+id)); status != http.StatusOK {
			t.Fatalf("%s: status %d", id, status)
		}
		r.waitLinked(id)
	}
	r.cancel()
	if err := r.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if line := p42.line(); line != "GAME OVER" {
		t.Fatalf("gi-42's player got %q", line)
	}
	calls, _ := r.backend.history()
	closedAt, ended := -1, map[string]string{}
	for i, c := range calls {
		switch {
		case c.op == "link" && c.link.Rooms != nil && c.link.Rooms.Capacity == 0:
			if c.link.Rooms.CallbackURL != "" || c.link.Rooms.CallbackToken != "" || c.link.Address != r.reg.Address || closedAt >= 0 {
				t.Fatalf("closing link %+v (an earlier one at %d)", c, closedAt)
			}
			closedAt = i
		case c.op == "end":
			if closedAt < 0 {
				t.Fatalf("%s ended before the server closed: %+v", c.id, calls)
			}
			ended[c.id] = c.reason
		}
	}
	if want := map[string]string{"gi-42": "Terminated", "gi-43": "Terminated", "gi-44": "Terminated"}; !reflect.DeepEqual(ended, want) {
		t.Fatalf("ended %v, want %v", ended, want)
	}
}

// The service repeats a delivery whose answer it lost: one session.
func TestRoomsRepeatedDeliveryStartsOneSession(t *testing.T) {
	r := startRoomsServer(t, nil)
	payload := r.session("gi-43", "pgt-secret-43")
	for i := range 3 {
		if status := r.deliver(payload); status != http.StatusOK {
			t.Fatalf("delivery %d: status %d", i, status)
		}
	}
	r.waitLinked("gi-43")
	time.Sleep(200 * time.Millisecond) // a second session would have linked by now
	if _, attempts := r.backend.history(); attempts["gi-43"] != 1 {
		t.Fatalf("gi-43 linked %d times", attempts["gi-43"])
	}
	started := regexp.MustCompile(`(?m)^\S+ gi-43 .*session started`)
	if n := len(started.FindAllString(r.logs.String(), -1)); n != 1 {
		t.Fatalf("%d sessions started", n)
	}
}

// A session whose room the service gave to another server (its callback
// answered too late) cannot link: it is dropped, the others play on.
func TestRoomsSessionRefusedAtLinkIsDropped(t *testing.T) {
	r := startRoomsServer(t, nil)
	payload := r.session("gi-43", "pgt-secret-43")
	payload["PartnerGameToken"] = "pgt-secret-not-this-instances"
	if status := r.deliver(payload); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	dropped := regexp.MustCompile(`(?m)^\S+ gi-43 .*session dropped: link: .*HTTP 401`)
	testkit.WaitFor(t, 10*time.Second, "gi-43 to be dropped", func() bool { return dropped.MatchString(r.logs.String()) })
	if len(r.calls("link", "gi-43")) != 0 || len(r.calls("end", "gi-43")) != 0 {
		t.Fatalf("gi-43 links %v, ends %v", r.calls("link", "gi-43"), r.calls("end", "gi-43"))
	}
	if _, answer := r.join("gi-42"); answer != "WELCOME "+r.serverName()+" gi-42" {
		t.Fatalf("JOIN gi-42: %q", answer)
	}
	if status := r.deliver(r.session("gi-44", "pgt-secret-44")); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	r.waitLinked("gi-44")
	r.running()
}

// A session placed but not linked yet turns its players away for now.
func TestRoomsNotReadyUntilLinked(t *testing.T) {
	r := startRoomsServer(t, nil)
	r.backend.mu.Lock()
	r.backend.linkStatuses = []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable}
	r.backend.mu.Unlock()
	if status := r.deliver(r.session("gi-43", "pgt-secret-43")); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	testkit.WaitFor(t, 10*time.Second, "gi-43's first link", func() bool { _, a := r.backend.history(); return a["gi-43"] > 0 })
	// The SDK waits at least 125 ms before its second try.
	if _, answer := r.join("gi-43"); answer != "NOT READY" {
		t.Fatalf("JOIN gi-43 while linking: %q", answer)
	}
	r.waitLinked("gi-43")
	testkit.WaitFor(t, 10*time.Second, "gi-43's players let in", func() bool {
		_, answer := r.join("gi-43")
		return answer == "WELCOME "+r.serverName()+" gi-43"
	})
}

func TestRoomsMaxGameLengthCountsPerSession(t *testing.T) {
	r := startRoomsServer(t, func(h *harness) { h.cfg.MaxGameLength = 700 * time.Millisecond })
	time.Sleep(350 * time.Millisecond)
	if status := r.deliver(r.session("gi-43", "pgt-secret-43")); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	testkit.WaitFor(t, 10*time.Second, "gi-42 to end", func() bool { return len(r.calls("end", "gi-42")) > 0 })
	if got := r.calls("end", "gi-43"); len(got) != 0 {
		t.Fatalf("gi-43 ended with gi-42: %+v", got)
	}
	testkit.WaitFor(t, 10*time.Second, "gi-43 to end", func() bool { return len(r.calls("end", "gi-43")) > 0 })
	for _, id := range []string{"gi-42", "gi-43"} {
		if got := r.calls("end", id); len(got) != 1 || got[0].reason != "MaxGameLength" {
			t.Fatalf("%s ends %+v", id, got)
		}
	}
	r.running()
}

func TestRoomsSessionPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	h := startHarness(t, func(h *harness) { h.cfg.Rooms, h.cfg.SessionPort = 2, ln.Addr().(*net.TCPAddr).Port })
	if err := h.wait(); err == nil || !strings.Contains(err.Error(), "session port") {
		t.Fatalf("run: %v", err)
	}
}

// The first link offers the rooms: refused, no session can come, and the
// server exits with the error as a dedicated one does.
func TestRoomsFirstLinkRefusedIsFinal(t *testing.T) {
	h := startHarness(t, func(h *harness) { h.cfg.Rooms, h.backend.linkStatuses = 4, []int{http.StatusUnauthorized} })
	reg := h.registration()
	h.callback(reg, reg.Callback.Token, h.payload)
	if err := h.wait(); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("run returned %v, want the link's HTTP 401", err)
	}
	if _, _, ends := h.backend.snapshot(); len(ends) != 0 {
		t.Fatalf("ends %v", ends)
	}
}

// The backend ending a session (heartbeat answers Ended) ends that game;
// a rooms server stays up for the next.
func TestRoomsBackendEndedSessionLeavesTheServerUp(t *testing.T) {
	r := startRoomsServer(t, nil)
	testkit.WaitFor(t, 10*time.Second, "a heartbeat", func() bool { _, hbs, _ := r.backend.snapshot(); return hbs > 0 })
	r.backend.setHeartbeatState("Ended")
	testkit.WaitFor(t, 10*time.Second, "gi-42's game to be over", func() bool {
		_, answer := r.join("gi-42")
		return answer == "GAME OVER"
	})
	r.running()
	if _, _, ends := r.backend.snapshot(); len(ends) != 0 {
		t.Fatalf("ended an instance the backend had already closed: %v", ends)
	}
}
