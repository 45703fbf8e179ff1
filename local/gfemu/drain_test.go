package gfemu

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A drained region answers "no server" with the time left as Retry-After,
// leaves its servers registered, and allocates again once it refills;
// other regions never notice.
func TestDrain(t *testing.T) {
	tests := []struct {
		name       string
		drainFor   time.Duration // from the fixture's start; <= 0 drains into the past
		region     string        // the region drained
		after      time.Duration // when the allocate for us-west comes
		wantStatus int
		wantRetry  string // Retry-After, "" = none
		wantBody   string
	}{
		{"not drained", 0, "", 0, 200, "", ""},
		{"drained, at once", 20 * time.Second, "us-west", 0, 404, "20", "no game server available in region us-west"},
		{"drained, part way: the time left", 20 * time.Second, "us-west", 12500 * time.Millisecond, 404, "8", "drained for 8 s more"},
		{"drained, the last moment rounds up to 1 s", 20 * time.Second, "us-west", 19900 * time.Millisecond, 404, "1", "drained"},
		{"refilled at the deadline", 20 * time.Second, "us-west", 20 * time.Second, 200, "", ""},
		{"refilled after it", 20 * time.Second, "us-west", time.Minute, 200, "", ""},
		{"a drain in the past is a refill", -time.Second, "us-west", 0, 200, "", ""},
		{"another region drained", 20 * time.Second, "eu-west", 0, 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			g := newGameServer(t, answering(http.StatusOK, `{}`))
			f.mustRegister(registerBody("127.0.0.1:7001", 0, g, "cb"))
			if tt.region != "" {
				f.emu.Drain(tt.region, f.clock.Now().Add(tt.drainFor))
			}
			f.clock.Advance(tt.after)
			// keep the server registered however long the case waits
			f.do(http.MethodPost, prefix+"/servers/127.0.0.1:7001/keepalive", regTok, `{"timeout":3600}`)
			r := f.allocate(`{"region":"us-west","attributes":{"env":"prag"}}`)
			if r.status != tt.wantStatus || r.header.Get("Retry-After") != tt.wantRetry {
				t.Fatalf("allocate = %d Retry-After %q %s, want %d %q", r.status, r.header.Get("Retry-After"), r.body, tt.wantStatus, tt.wantRetry)
			}
			if tt.wantBody != "" && !strings.Contains(r.errorText(t), tt.wantBody) {
				t.Errorf("error %q, want %q in it", r.errorText(t), tt.wantBody)
			}
			if drained := tt.wantStatus == 404; f.emu.Drained("us-west") != drained || (len(f.emu.Servers()) == 1) != drained {
				t.Errorf("Drained = %v with %d servers registered, want %v", f.emu.Drained("us-west"), len(f.emu.Servers()), drained)
			}
			if len(g.Calls()) != len(f.emu.Allocations()) {
				t.Errorf("%d callbacks for %d allocations", len(g.Calls()), len(f.emu.Allocations()))
			}
		})
	}
}

// Drain with a zero time refills at once, and DrainedUntil says when.
func TestDrainRefillNow(t *testing.T) {
	f := newFixture(t, nil)
	until := f.clock.Now().Add(time.Minute)
	f.emu.Drain("us-west", until)
	if got, ok := f.emu.DrainedUntil("us-west"); !ok || !got.Equal(until) {
		t.Fatalf("DrainedUntil = %v %v, want %v", got, ok, until)
	}
	f.emu.Drain("us-west", time.Time{})
	if f.emu.Drained("us-west") {
		t.Fatal("still drained after a refill")
	}
	// Requests that are bad anyway are answered as such, drained or not.
	f.emu.Drain("us-west", until)
	if r := f.allocate(`{"attributes":{}}`); r.status != http.StatusBadRequest {
		t.Fatalf("an allocate without region = %d, want 400", r.status)
	}
	if r := f.do(http.MethodPost, prefix+"/allocate", "wrong", `{"region":"us-west"}`); r.status != http.StatusUnauthorized {
		t.Fatalf("a stranger's allocate = %d, want 401 before any drain", r.status)
	}
}
