package allocclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

const queuedUntil = "2026-11-24T10:10:00Z"

// pending is an answer about gi-q in state (Queued or Allocating), with
// Retry-After retryAfter unless that is "".
func pending(status int, state, retryAfter string) reply {
	r := reply{status: status, body: fmt.Sprintf(`{"gameInstanceId":"gi-q","state":%q,"fallbackUsed":false,"queuedUntil":%q,`+
		`"attempts":[{"region":"us-west","status":503,"durationMs":12,"maxPlayerLatencyMs":50}]}`, state, queuedUntil)}
	if retryAfter != "" {
		r.header = map[string]string{"Retry-After": retryAfter}
	}
	return r
}

func accepted(retryAfter string) reply { return pending(http.StatusAccepted, StateQueued, retryAfter) }
func queued(retryAfter string) reply   { return pending(http.StatusOK, StateQueued, retryAfter) }

var placed = reply{status: 200, body: `{"gameInstanceId":"gi-q","state":"Allocated","region":"us-west","fallbackUsed":false,` +
	`"server":{"address":"203.0.113.9:7777","ip":"203.0.113.9","ports":{"game":7777}},"queuedUntil":"` + queuedUntil + `","attempts":[]}`}

// placedNow is a POST that found a server at once.
var placedNow = reply{status: 201, body: placed.body}

func failedWith(code string) reply {
	return reply{status: 200, body: fmt.Sprintf(`{"gameInstanceId":"gi-q","state":"Failed","fallbackUsed":false,"queuedUntil":%q,`+
		`"error":{"code":%q,"message":"scripted %s"},"attempts":[]}`, queuedUntil, code, code)}
}

// countWaits makes c's waits instant and returns the list they are kept in.
func countWaits(c *Client) *[]time.Duration {
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return &waits
}

func TestAllocateAndWait(t *testing.T) {
	s := time.Second
	tests := []struct {
		name      string
		opts      Options
		replies   []reply
		wantCalls string // the methods sent, in order
		wantWaits []time.Duration
		wantState string // of the allocation returned; "" = none
		wantCode  string // "" = success
	}{
		{"queued, then placed", Options{}, []reply{accepted("1"), queued("3"), placed},
			"POST GET GET", []time.Duration{s, 3 * s}, StateAllocated, ""},
		{"placed at once: no GET", Options{}, []reply{placedNow},
			"POST", nil, StateAllocated, ""},
		{"timed out", Options{}, []reply{accepted("2"), failedWith(CodePlacementTimedOut)},
			"POST GET", []time.Duration{2 * s}, StateFailed, CodePlacementTimedOut},
		{"cancelled", Options{}, []reply{accepted("2"), queued("2"), failedWith(CodePlacementCancelled)},
			"POST GET GET", []time.Duration{2 * s, 2 * s}, StateFailed, CodePlacementCancelled},
		{"the queue ended in a failure", Options{}, []reply{accepted("1"), failedWith(CodeNoCapacity)},
			"POST GET", []time.Duration{s}, StateFailed, CodeNoCapacity},
		{"Allocating is pending too", Options{}, []reply{accepted("1"), pending(200, StateAllocating, ""), placed},
			"POST GET GET", []time.Duration{s, 2 * s}, StateAllocated, ""},
		{"Retry-After 0 waits 1 s", Options{}, []reply{accepted("0"), placed},
			"POST GET", []time.Duration{s}, StateAllocated, ""},
		{"Retry-After 120 waits 15 s", Options{}, []reply{accepted("120"), placed},
			"POST GET", []time.Duration{15 * s}, StateAllocated, ""},
		{"no Retry-After waits 2 s", Options{}, []reply{accepted(""), placed},
			"POST GET", []time.Duration{2 * s}, StateAllocated, ""},
		// Allocate's and Get's own retries stay: the wait adds to them.
		{"the submission is retried", Options{}, []reply{errReply(503, CodeServiceUnavailable, "1"), accepted("2"), placed},
			"POST POST GET", []time.Duration{s, 2 * s}, StateAllocated, ""},
		{"a poll is retried", Options{}, []reply{accepted("2"), errReply(503, CodeServiceUnavailable, "1"), placed},
			"POST GET GET", []time.Duration{2 * s, s}, StateAllocated, ""},
		{"no queue: NO_CAPACITY as from Allocate", Options{MaxAttempts: 2}, []reply{errReply(503, CodeNoCapacity, "1")},
			"POST POST", []time.Duration{s}, "", CodeNoCapacity},
		{"a hard failure at once", Options{}, []reply{errReply(400, CodeInvalidRequest, "")},
			"POST", nil, "", CodeInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, srv := newScripted(t, tc.opts, tc.replies...)
			waits := countWaits(c)
			a, err := c.AllocateAndWait(context.Background(), AllocateRequest{GameInstanceID: "gi-q", QueueTimeoutSeconds: new(30)})

			var calls []string
			for _, r := range srv.requests() {
				calls = append(calls, r.method)
				if r.method == http.MethodPost && !bytes.Contains(r.body, []byte(`"queueTimeoutSeconds":30`)) ||
					r.method == http.MethodGet && r.path != "/v1/allocations/gi-q" {
					t.Errorf("sent %s %s %s", r.method, r.path, r.body)
				}
			}
			if got := fmt.Sprint(calls); got != "["+tc.wantCalls+"]" {
				t.Errorf("calls %s, want [%s]", got, tc.wantCalls)
			}
			if !slices.Equal(*waits, tc.wantWaits) {
				t.Errorf("waited %v, want %v", *waits, tc.wantWaits)
			}
			if (a == nil && tc.wantState != "") || (a != nil && string(a.State) != tc.wantState) {
				t.Fatalf("allocation %+v, want state %q", a, tc.wantState)
			}
			if tc.wantCode == "" {
				if err != nil || a.Server == nil || a.Created != (tc.wantCalls == "POST") {
					t.Fatalf("allocation %+v, err %v", a, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !IsCode(err, tc.wantCode) {
				t.Fatalf("err = %v, want an *Error %s", err, tc.wantCode)
			}
			if a != nil && (e.Allocation != a || e.Message != "scripted "+tc.wantCode || e.Status != http.StatusOK) {
				t.Fatalf("the Failed record's error %+v, returned %+v", e, a)
			}
		})
	}
}

func TestAFailedPlacementsMessage(t *testing.T) {
	c, _ := newScripted(t, Options{}, accepted("1"), failedWith(CodePlacementTimedOut))
	countWaits(c)
	_, err := c.AllocateAndWait(context.Background(), AllocateRequest{GameInstanceID: "gi-q"})
	const want = "allocclient: GET /v1/allocations/{gameInstanceId}: Failed PLACEMENT_TIMED_OUT: scripted PLACEMENT_TIMED_OUT"
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	if e := (*Error)(nil); !errors.As(err, &e) || e.Retryable() {
		t.Fatalf("%#v: want an *Error that is not retried as is", err)
	}
}

func TestAllocateAnswersAQueuedPlacement(t *testing.T) {
	c, _ := newScripted(t, Options{}, accepted("3"))
	a, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-q"})
	until, _ := time.Parse(time.RFC3339, queuedUntil)
	if err != nil || a.State != StateQueued || a.Created || a.RetryAfter != 3*time.Second || !a.QueuedUntil.Equal(until) ||
		a.Attempts[0].MaxPlayerLatencyMs != 50 {
		t.Fatalf("%+v, %v", a, err)
	}
}

func TestAllocateAndWaitStopsWithItsContext(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, srv := newScripted(t, Options{}, accepted("10"), queued("10")) // real waits
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			a, err := c.AllocateAndWait(ctx, AllocateRequest{GameInstanceID: "gi-q"})
			if took := time.Since(start); took > 2*time.Second || len(srv.requests()) != 1 {
				t.Fatalf("returned after %s and %d calls", took, len(srv.requests()))
			}
			if !errors.Is(err, tc.want) || a == nil || a.State != StateQueued {
				t.Fatalf("err = %v, allocation %+v; want %v and the Queued placement", err, a, tc.want)
			}
		})
	}
}

func TestAllocateAndWaitIsBounded(t *testing.T) {
	c, srv := newScripted(t, Options{}, accepted("1"), queued("1")) // a service that never ends the queue
	waits := countWaits(c)
	a, err := c.AllocateAndWait(context.Background(), AllocateRequest{GameInstanceID: "gi-q"})
	if !errors.Is(err, ErrStillPending) || a.State != StateQueued || len(*waits) != maxPolls || len(srv.requests()) != 1+maxPolls {
		t.Fatalf("err = %v after %d waits and %d calls", err, len(*waits), len(srv.requests()))
	}
	var total time.Duration
	for _, w := range *waits {
		total += w
	}
	if total < maxQueueTimeout {
		t.Fatalf("gave up after %s of waiting, before the longest queue's deadline", total)
	}
}
