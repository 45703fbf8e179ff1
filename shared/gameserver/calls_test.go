package gameserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewValidates(t *testing.T) {
	good := Payload{GameInstanceID: "gi-1", PartnerGameToken: testToken, BackendAddress: "http://127.0.0.1:1"}
	tests := []struct {
		name string
		o    Options
		want string // "" = accepted
	}{
		{"defaults", Options{Payload: good}, ""},
		{"no payload", Options{}, "GameInstanceId is required"},
		{"negative patience", Options{Payload: good, LinkPatience: -time.Second}, "LinkPatience must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.o)
			if tc.want == "" {
				if err != nil || c.HealthPeriod() != DefaultHealthPeriod || c.linkPatience != 3*time.Minute || c.GameInstanceID() != "gi-1" {
					t.Fatalf("New: %v, %+v", err, c)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLink(t *testing.T) {
	inProgress := apiErr(409, "ALLOCATION_IN_PROGRESS", "Allocating", "")
	tests := []struct {
		name      string
		script    []answer
		patience  time.Duration
		wantCalls int
		wantCode  Code // "" with wantStatus 0: success
		wantState State
		// wantStatus is the *APIError's status; -1: an error that is no *APIError.
		wantStatus int
		wantMsg    string
		minElapsed time.Duration
	}{
		{name: "linked at once", wantCalls: 1},
		{name: "allocation still being recorded", script: []answer{inProgress, inProgress}, wantCalls: 3},
		{name: "store unavailable, Retry-After honoured", script: []answer{apiErr(503, "SERVICE_UNAVAILABLE", "", "1")}, wantCalls: 2,
			minElapsed: time.Second},
		{name: "gateway throttled", script: []answer{{429, `{"message":"Too Many Requests"}`, nil}}, wantCalls: 2},
		{name: "Lambda failed without a code", script: []answer{{502, `{"message":"Internal Server Error"}`, nil}, {500, ``, nil}}, wantCalls: 3},
		{name: "connection dropped", script: []answer{{status: -1}}, wantCalls: 2},
		{name: "wrong token is final", script: []answer{apiErr(401, "UNAUTHORIZED", "", "")}, wantCalls: 1, wantStatus: 401, wantCode: CodeUnauthorized},
		{name: "already ended is final", script: []answer{apiErr(409, "INVALID_STATE", "Ended", "")}, wantCalls: 1, wantStatus: 409,
			wantCode: CodeInvalidState, wantState: StateEnded, wantMsg: "(state Ended)"},
		{name: "bad body is final", script: []answer{apiErr(400, "INVALID_REQUEST", "", "")}, wantCalls: 1, wantStatus: 400, wantCode: CodeInvalidRequest},
		{name: "INTERNAL is final", script: []answer{apiErr(500, "INTERNAL", "", "")}, wantCalls: 1, wantStatus: 500, wantCode: CodeInternal},
		{name: "no such route is final", script: []answer{{404, `404 page not found`, nil}}, wantCalls: 1, wantStatus: 404, wantMsg: "404 page not found"},
		{name: "unreadable 2xx is final", script: []answer{{200, `<html>`, nil}}, wantCalls: 1, wantStatus: -1, wantMsg: "unreadable answer"},
		{name: "patience runs out", script: []answer{inProgress, inProgress, inProgress, inProgress, inProgress, inProgress},
			patience: 600 * time.Millisecond, wantStatus: 409, wantCode: CodeAllocationInProgress, wantState: StateAllocating,
			wantMsg: "gave up after 600ms", minElapsed: 600 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // most of it is waiting
			f := newFakeBackend(t, "/prod")
			f.queue("link", tc.script...)
			c, _ := newTestClient(t, f, func(o *Options) {
				o.Payload.BackendAddress += "/prod/" // a stage path, with a trailing slash
				o.LinkPatience = tc.patience
			})
			start := time.Now()
			req := LinkRequest{Address: "203.0.113.10:7777", Ports: map[string]int{"game": 7777}, ServerName: "s-1"}
			inst, err := c.Link(context.Background(), req)
			elapsed := time.Since(start)
			calls := f.requests("link")
			if tc.wantCalls > 0 && len(calls) != tc.wantCalls {
				t.Errorf("%d calls, want %d", len(calls), tc.wantCalls)
			}
			for _, r := range calls {
				if r.path != "/prod/v1/game-instances/gi-1/link" || r.auth != "Bearer "+testToken || r.contentType != "application/json" ||
					!jsonEqual(t, r.body, `{"address":"203.0.113.10:7777","ports":{"game":7777},"serverName":"s-1"}`) {
					t.Fatalf("request %+v", r)
				}
			}
			if elapsed < tc.minElapsed {
				t.Errorf("took %s, want at least %s", elapsed, tc.minElapsed)
			}
			if tc.wantStatus == 0 {
				if err != nil || inst.State != StateLinked || inst.GameInstanceID != "gi-1" {
					t.Fatalf("Link: %+v, %v", inst, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) || strings.Contains(err.Error(), testToken) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantMsg)
			}
			var api *APIError
			switch {
			case tc.wantStatus == -1 && errors.As(err, &api):
				t.Fatalf("error %v is an *APIError", err)
			case tc.wantStatus > 0 && (!errors.As(err, &api) || api.Status != tc.wantStatus || api.Code != tc.wantCode ||
				api.State != tc.wantState || api.Op != "link"):
				t.Fatalf("error %#v, want status %d code %q state %q", err, tc.wantStatus, tc.wantCode, tc.wantState)
			}
		})
	}
}

func TestLinkStopsWithTheContext(t *testing.T) {
	f := newFakeBackend(t, "")
	f.always("link", apiErr(503, "SERVICE_UNAVAILABLE", "", "1"))
	c, _ := newTestClient(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Link(ctx, LinkRequest{})
	if !errors.Is(err, context.DeadlineExceeded) || !IsCode(err, CodeUnavailable) || time.Since(start) > 2*time.Second {
		t.Fatalf("after %s: %v, want the deadline and the last SERVICE_UNAVAILABLE", time.Since(start), err)
	}
	// No body at all: an empty LinkRequest sends {}.
	if r := f.requests("link"); len(r) != 1 || r[0].body != "{}" {
		t.Fatalf("requests %+v", r)
	}
}

func TestHeartbeatIsOneCall(t *testing.T) {
	tests := []struct {
		name      string
		answer    answer
		wantState State
		wantCode  Code
	}{
		{"linked", linked("gi-1"), StateLinked, ""},
		{"ended", answer{200, `{"gameInstanceId":"gi-1","state":"Ended","endedAt":"2026-11-22T04:31:17.48Z","endReason":"EndedByBackend"}`, nil}, StateEnded, ""},
		{"before the link", apiErr(409, "INVALID_STATE", "Allocated", ""), "", CodeInvalidState},
		{"unavailable, not retried", apiErr(503, "SERVICE_UNAVAILABLE", "", "1"), "", CodeUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeBackend(t, "")
			f.queue("heartbeat", tc.answer)
			c, _ := newTestClient(t, f, nil)
			inst, err := c.Heartbeat(context.Background())
			if got := f.requests("heartbeat"); len(got) != 1 || got[0].body != "" || got[0].auth != "Bearer "+testToken {
				t.Fatalf("requests %+v", got)
			}
			if tc.wantCode != "" {
				if !IsCode(err, tc.wantCode) {
					t.Fatalf("error %v, want %s", err, tc.wantCode)
				}
				return
			}
			if err != nil || inst.State != tc.wantState {
				t.Fatalf("Heartbeat: %+v, %v", inst, err)
			}
			if tc.wantState == StateEnded && (inst.EndReason != "EndedByBackend" || inst.EndedAt.IsZero()) {
				t.Fatalf("ended instance %+v", inst)
			}
		})
	}
}

func TestEnd(t *testing.T) {
	ended := answer{200, `{"gameInstanceId":"gi-1","state":"Ended","endReason":"IWON"}`, nil}
	tests := []struct {
		name      string
		reason    string
		script    []answer
		wantBody  string
		wantCalls int
		wantErr   string
	}{
		{"with a reason", "IWON", []answer{ended}, `{"reason":"IWON"}`, 1, ""},
		{"without a reason sends no body", "", []answer{ended}, "", 1, ""},
		{"transient failures retried", "IWON", []answer{{status: -1}, apiErr(503, "SERVICE_UNAVAILABLE", "", ""), ended}, `{"reason":"IWON"}`, 3, ""},
		{"a failed instance cannot end", "IWON", []answer{apiErr(409, "INVALID_STATE", "Failed", "")}, `{"reason":"IWON"}`, 1, "INVALID_STATE"},
		{"reason too long, not sent", strings.Repeat("r", 256), nil, "", 0, "at most 255 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeBackend(t, "")
			f.queue("end", tc.script...)
			c, _ := newTestClient(t, f, nil)
			inst, err := c.End(context.Background(), tc.reason)
			calls := f.requests("end")
			if len(calls) != tc.wantCalls {
				t.Fatalf("%d calls, want %d", len(calls), tc.wantCalls)
			}
			for _, r := range calls {
				if r.body != tc.wantBody {
					t.Fatalf("body %q, want %q", r.body, tc.wantBody)
				}
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || inst.State != StateEnded {
				t.Fatalf("End: %+v, %v", inst, err)
			}
		})
	}
}

// Whatever the answer echoes, the token does not reach an error.
func TestErrorsNeverCarryTheToken(t *testing.T) {
	f := newFakeBackend(t, "")
	f.queue("heartbeat", answer{401, `{"message":"bad token ` + testToken + `"}`, nil})
	c, _ := newTestClient(t, f, nil)
	_, err := c.Heartbeat(context.Background())
	if err == nil || strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "bad token [redacted]") {
		t.Fatalf("error %v", err)
	}
}

func TestRetryableAndPause(t *testing.T) {
	tests := []struct {
		err       *APIError
		retryable bool
	}{
		{&APIError{Status: 409, Code: CodeAllocationInProgress}, true},
		{&APIError{Status: 409, Code: CodeInvalidState}, false},
		{&APIError{Status: 429}, true},
		{&APIError{Status: 503, Code: CodeUnavailable}, true},
		{&APIError{Status: 504}, true},
		{&APIError{Status: 500, Code: CodeInternal}, false},
		{&APIError{Status: 401, Code: CodeUnauthorized}, false},
	}
	for _, tc := range tests {
		if got := tc.err.Retryable(); got != tc.retryable {
			t.Errorf("%v: Retryable = %v", tc.err, got)
		}
	}
	c := &Client{maxWait: 3 * time.Second}
	for attempt := range 20 {
		if d := c.pause(attempt, errors.New("x")); d < backoffMin/2 || d > backoffMax {
			t.Fatalf("pause %d = %s", attempt, d)
		}
	}
	if d := c.pause(0, &APIError{Status: 503, RetryAfter: 2 * time.Second}); d != 2*time.Second {
		t.Fatalf("Retry-After 2s: pause %s", d)
	}
	if d := c.pause(0, &APIError{Status: 503, RetryAfter: time.Minute}); d != 3*time.Second {
		t.Fatalf("Retry-After 1m: pause %s, want MaxWait", d)
	}
}
