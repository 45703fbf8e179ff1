package gameserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestRunHeartbeats(t *testing.T) {
	ended := answer{200, `{"gameInstanceId":"gi-1","state":"Ended","endReason":"EndedByBackend"}`, nil}
	unhealthy := answer{200, `{"gameInstanceId":"gi-1","state":"Unhealthy","unhealthyReason":"MissedHeartbeats"}`, nil}
	tests := []struct {
		name      string
		script    []answer
		wantErr   error  // errors.Is
		wantMsg   string // part of the error
		wantCalls int
		wantSeen  int // OnHeartbeat calls
		logged    string
	}{
		{name: "until the backend ends it", script: []answer{linked("gi-1"), linked("gi-1"), ended},
			wantErr: ErrEnded, wantMsg: "heartbeat answered Ended (reason EndedByBackend): game instance ended", wantCalls: 3, wantSeen: 3},
		{name: "until the sweep gives up on it", script: []answer{unhealthy},
			wantErr: ErrUnhealthy, wantMsg: "answered Unhealthy (reason MissedHeartbeats)", wantCalls: 1, wantSeen: 1},
		{name: "transient failures only logged", script: []answer{{status: -1}, apiErr(503, "SERVICE_UNAVAILABLE", "", ""),
			{429, `{"message":"Too Many Requests"}`, nil}, linked("gi-1"), ended},
			wantErr: ErrEnded, wantCalls: 5, wantSeen: 2, logged: "heartbeats answered again"},
		{name: "refused for good", script: []answer{linked("gi-1"), apiErr(401, "UNAUTHORIZED", "", "")},
			wantMsg: "HTTP 401 UNAUTHORIZED", wantCalls: 2, wantSeen: 1},
		{name: "before the link", script: []answer{apiErr(409, "INVALID_STATE", "Allocated", "")},
			wantMsg: "(state Allocated)", wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeBackend(t, "")
			f.queue("heartbeat", tc.script...)
			c, logs := newTestClient(t, f, nil)
			var seen atomic.Int32
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := c.RunHeartbeats(ctx, HeartbeatOptions{Interval: 10 * time.Millisecond, OnHeartbeat: func(*Instance) { seen.Add(1) }})
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("error %v, want %v containing %q", err, tc.wantErr, tc.wantMsg)
			}
			if n := len(f.requests("heartbeat")); n != tc.wantCalls || int(seen.Load()) != tc.wantSeen {
				t.Fatalf("%d heartbeats, %d seen; want %d, %d", n, seen.Load(), tc.wantCalls, tc.wantSeen)
			}
			if !strings.Contains(logs.String(), tc.logged) {
				t.Fatalf("logs lack %q:\n%s", tc.logged, logs)
			}
		})
	}
}

// The interval defaults to a third of HealthPeriod; a Retry-After longer
// than it delays the next try, up to HealthPeriod.
func TestHeartbeatPacing(t *testing.T) {
	f := newFakeBackend(t, "")
	f.queue("heartbeat", linked("gi-1"), apiErr(503, "SERVICE_UNAVAILABLE", "", "30"), linked("gi-1"))
	f.always("heartbeat", answer{200, `{"gameInstanceId":"gi-1","state":"Ended"}`, nil})
	c, _ := newTestClient(t, f, func(o *Options) { o.HealthPeriod = 300 * time.Millisecond })
	start := time.Now()
	if err := c.RunHeartbeats(context.Background(), HeartbeatOptions{}); !errors.Is(err, ErrEnded) {
		t.Fatal(err)
	}
	got := f.requests("heartbeat")
	if len(got) != 4 {
		t.Fatalf("%d heartbeats", len(got))
	}
	gaps := []time.Duration{got[0].at.Sub(start), got[1].at.Sub(got[0].at), got[2].at.Sub(got[1].at), got[3].at.Sub(got[2].at)}
	// Lower bounds only: a loaded machine may be late, never early.
	for i, want := range []time.Duration{100, 100, 300, 100} {
		if want *= time.Millisecond; gaps[i] < want-5*time.Millisecond {
			t.Fatalf("gap %d = %s, want at least %s (gaps %v)", i, gaps[i], want, gaps)
		}
	}
	if gaps[2] > 10*time.Second {
		t.Fatalf("Retry-After 30 was not capped at HealthPeriod: %v", gaps)
	}
}

func TestHeartbeaterStopsWithoutLeaks(t *testing.T) {
	f := newFakeBackend(t, "")
	c, _ := newTestClient(t, f, nil)
	before := goleak.IgnoreCurrent()

	h := c.StartHeartbeats(context.Background(), HeartbeatOptions{Interval: 5 * time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	for len(f.requests("heartbeat")) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.Err() != nil {
		t.Fatalf("Err before the end: %v", h.Err())
	}
	if err := h.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-h.Done():
	default:
		t.Fatal("Done open after Stop")
	}
	if err := h.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	// A request sent before Stop may reach the backend a moment later.
	time.Sleep(30 * time.Millisecond)
	n := len(f.requests("heartbeat"))
	time.Sleep(50 * time.Millisecond)
	if later := len(f.requests("heartbeat")); later != n || n < 3 {
		t.Fatalf("heartbeats %d, then %d after Stop", n, later)
	}
	c.http.CloseIdleConnections()
	goleak.VerifyNone(t, before)
}

func TestHeartbeaterEnds(t *testing.T) {
	tests := []struct {
		name    string
		cancel  bool // end the parent context instead of the backend
		wantErr error
	}{
		{"backend ended it", false, ErrEnded},
		{"context ended", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeBackend(t, "")
			if !tc.cancel {
				f.queue("heartbeat", linked("gi-1"), answer{200, `{"gameInstanceId":"gi-1","state":"Ended"}`, nil})
			}
			c, _ := newTestClient(t, f, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := c.StartHeartbeats(ctx, HeartbeatOptions{Interval: 5 * time.Millisecond})
			if tc.cancel {
				cancel()
			}
			select {
			case <-h.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the heartbeater did not stop")
			}
			if err := h.Err(); !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Err = %v, want %v", err, tc.wantErr)
			}
			if err := h.Stop(); !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Stop = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// The interval the backend names in its answers becomes the default, within
// bounds; an explicit Interval wins over it.
func TestHeartbeatIntervalFollowsTheBackend(t *testing.T) {
	for seconds, want := range map[int]time.Duration{1: time.Second, 30: 30 * time.Second, 1 << 30: maxAdvisedInterval} {
		if got := advisedInterval(seconds); got != want {
			t.Errorf("advisedInterval(%d) = %v, want %v", seconds, got, want)
		}
	}
	advise := answer{200, `{"gameInstanceId":"gi-1","state":"Linked","heartbeatIntervalSeconds":1}`, nil}
	ended := answer{200, `{"gameInstanceId":"gi-1","state":"Ended","heartbeatIntervalSeconds":1}`, nil}
	tests := []struct {
		name     string
		interval time.Duration
		minGap   time.Duration
		maxGap   time.Duration
	}{
		{"the advice, after the first answer", 0, time.Second, 5 * time.Second},
		{"an explicit interval", 50 * time.Millisecond, 50 * time.Millisecond, 900 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeBackend(t, "")
			f.queue("heartbeat", advise)
			f.always("heartbeat", ended)
			c, _ := newTestClient(t, f, func(o *Options) { o.HealthPeriod = 300 * time.Millisecond })
			if err := c.RunHeartbeats(context.Background(), HeartbeatOptions{Interval: tc.interval}); !errors.Is(err, ErrEnded) {
				t.Fatal(err)
			}
			got := f.requests("heartbeat")
			if len(got) != 2 {
				t.Fatalf("%d heartbeats", len(got))
			}
			if gap := got[1].at.Sub(got[0].at); gap < tc.minGap-5*time.Millisecond || gap > tc.maxGap {
				t.Fatalf("gap %v, want %v to %v", gap, tc.minGap, tc.maxGap)
			}
		})
	}
}

// With AllSessions every heartbeat asks for the server's other sessions,
// and OnHeartbeat hears their states; without it no body is sent.
func TestHeartbeatsForAllSessions(t *testing.T) {
	withSessions := answer{200, `{"gameInstanceId":"gi-1","state":"Linked","sessions":[{"gameInstanceId":"gi-2","state":"Linked"},` +
		`{"gameInstanceId":"gi-3","state":"Ended"}]}`, nil}
	ended := answer{200, `{"gameInstanceId":"gi-1","state":"Ended"}`, nil}
	for _, all := range []bool{true, false} {
		t.Run(fmt.Sprint("allSessions=", all), func(t *testing.T) {
			f := newFakeBackend(t, "")
			f.queue("heartbeat", withSessions, ended)
			c, _ := newTestClient(t, f, nil)
			var heard []Session
			err := c.RunHeartbeats(context.Background(), HeartbeatOptions{Interval: 10 * time.Millisecond, AllSessions: all,
				OnHeartbeat: func(i *Instance) { heard = append(heard, i.Sessions...) }})
			if !errors.Is(err, ErrEnded) {
				t.Fatalf("error %v, want ErrEnded", err)
			}
			wantBody := ""
			if all {
				wantBody = `{"allSessions":true}`
			}
			for _, r := range f.requests("heartbeat") {
				if r.body != wantBody {
					t.Errorf("heartbeat body %q, want %q", r.body, wantBody)
				}
			}
			if len(heard) != 2 || heard[0] != (Session{GameInstanceID: "gi-2", State: StateLinked}) || heard[1].State != StateEnded {
				t.Errorf("heard %+v", heard)
			}
		})
	}
}
