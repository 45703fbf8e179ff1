package gfemu

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

// The callback token travels in the Authorization header verbatim or, when
// the Allocator is configured so, as a Bearer credential; a server that
// registered without a token gets no header and an empty token is returned.
func TestAllocateCallbackAuthorization(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bearer   bool
		token    string
		wantAuth string
	}{
		{"verbatim", false, "cb-secret", "cb-secret"},
		{"bearer", true, "cb-secret", "Bearer cb-secret"},
		{"no token", false, "", ""},
		{"no token, bearer", true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *Config) { c.CallbackBearer = tc.bearer })
			g := newGameServer(t, answering(http.StatusOK, `{}`))
			f.mustRegister(registerBody("127.0.0.1:7001", 0, g, tc.token))
			r := f.allocate(`{"region":"us-west"}`)
			if r.status != http.StatusOK {
				t.Fatalf("allocate = %d %s", r.status, r.body)
			}
			if calls := g.Calls(); len(calls) != 1 || calls[0].auth != tc.wantAuth {
				t.Fatalf("callbacks = %+v, want one with Authorization %q", calls, tc.wantAuth)
			}
			if got := r.json(t)["token"]; got != tc.token {
				t.Fatalf("answer token = %v, want %q", got, tc.token)
			}
		})
	}
}

func TestAllocateAnswerPayload(t *testing.T) {
	tests := []struct {
		name        string
		callback    http.HandlerFunc // nil = registered without callback
		sent        string           // payload field of the request, "" = absent
		wantPayload string
		wantToken   string
		wantBody    string // what the callback received
	}{
		{name: "empty callback answer is null", callback: answering(http.StatusNoContent, ""), sent: `{"a":1}`, wantPayload: "null", wantToken: "cb", wantBody: `{"a":1}`},
		{name: "absent payload is sent as null", callback: answering(http.StatusOK, `[1,2]`), wantPayload: "[1,2]", wantToken: "cb", wantBody: "null"},
		{name: "any JSON payload", callback: answering(http.StatusAccepted, `"ok"`), sent: `"just a string"`, wantPayload: `"ok"`, wantToken: "cb", wantBody: `"just a string"`},
		{name: "server without callback", sent: `{"a":1}`, wantPayload: "null", wantToken: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			var g *gameServer
			if tc.callback != nil {
				g = newGameServer(t, tc.callback)
				f.mustRegister(registerBody("127.0.0.1:7001", 0, g, "cb"))
			} else {
				f.mustRegister(`{"address":"127.0.0.1:7001","priority":0,"region":"us-west"}`)
			}
			body := `{"region":"us-west"}`
			if tc.sent != "" {
				body = `{"region":"us-west","payload":` + tc.sent + `}`
			}
			r := f.allocate(body)
			if r.status != http.StatusOK {
				t.Fatalf("allocate = %d %s", r.status, r.body)
			}
			var got gamefabric.Allocation
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Payload) != tc.wantPayload || got.Token != tc.wantToken {
				t.Fatalf("answer %s: payload %s token %q, want %s %q", r.body, got.Payload, got.Token, tc.wantPayload, tc.wantToken)
			}
			if g != nil {
				if calls := g.Calls(); len(calls) != 1 || calls[0].body != tc.wantBody {
					t.Fatalf("callback got %+v, want body %s", calls, tc.wantBody)
				}
			}
		})
	}
}

func TestAllocateSkipsFailedCallbacks(t *testing.T) {
	const cbTimeout = 150 * time.Millisecond
	tests := []struct {
		name    string
		handler http.HandlerFunc
		closed  bool
		minTime time.Duration
	}{
		{name: "dead (closed server)", handler: answering(http.StatusOK, `{}`), closed: true},
		{name: "slow (beyond CallbackTimeout)", minTime: cbTimeout, handler: func(w http.ResponseWriter, r *http.Request) {
			select { // the emulator hanging up cancels r's context
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
		{name: "non-2xx", handler: answering(http.StatusServiceUnavailable, `{"error":"busy"}`)},
		{name: "redirect", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}},
		{name: "2xx that is not JSON", handler: answering(http.StatusOK, `allocated!`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *Config) { c.CallbackTimeout = cbTimeout })
			bad := newGameServer(t, tc.handler)
			good := newGameServer(t, answering(http.StatusOK, `{"who":"good"}`))
			f.mustRegister(registerBody("127.0.0.1:7001", 0, bad, "bad"))
			f.mustRegister(registerBody("127.0.0.1:7002", 1, good, "good"))
			f.mustRegister(registerBody("127.0.0.1:7003", 2, good, "spare"))
			if tc.closed {
				bad.srv.Close()
			}

			start := time.Now()
			r := f.allocate(`{"region":"us-west"}`)
			if elapsed := time.Since(start); elapsed < tc.minTime {
				t.Fatalf("allocate took %v, want at least the callback timeout %v", elapsed, tc.minTime)
			}
			if r.status != http.StatusOK {
				t.Fatalf("allocate = %d %s", r.status, r.body)
			}
			if got := r.json(t); got["address"] != "127.0.0.1:7002" || got["token"] != "good" {
				t.Fatalf("answer = %v, want the next candidate 127.0.0.1:7002", got)
			}
			if got := f.addresses(); !reflect.DeepEqual(got, []string{"127.0.0.1:7003"}) {
				t.Fatalf("registered = %v, want the failed server dropped and only the spare left", got)
			}
			if allocs := f.emu.Allocations(); len(allocs) != 1 || allocs[0].Server != "127.0.0.1:7002" {
				t.Fatalf("Allocations() = %+v, want only the good one", allocs)
			}
		})
	}
}
