package allocclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// reply is one scripted answer; drop closes the connection instead.
type reply struct {
	status int
	header map[string]string
	body   string
	drop   bool
	// retryAt sends Retry-After as the HTTP date this long after the answer.
	retryAt time.Duration
}

type seen struct {
	at     time.Time
	host   string
	method string
	path   string
	body   []byte
	header http.Header
}

// scripted answers its requests in order, repeating the last reply, and
// keeps what it was sent.
type scripted struct {
	mu      sync.Mutex
	replies []reply
	got     []seen
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.got = append(s.got, seen{at: time.Now(), host: r.Host, method: r.Method, path: r.URL.EscapedPath(), body: body, header: r.Header.Clone()})
	rp := s.replies[min(len(s.got), len(s.replies))-1]
	s.mu.Unlock()
	if rp.drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	if rp.retryAt > 0 {
		w.Header().Set("Retry-After", time.Now().Add(rp.retryAt).UTC().Format(http.TimeFormat))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rp.status)
	_, _ = io.WriteString(w, rp.body)
}

func (s *scripted) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

func newScripted(t *testing.T, o Options, replies ...reply) (*Client, *scripted) {
	t.Helper()
	s := &scripted{replies: replies}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	o.BaseURL = srv.URL
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func errReply(status int, code string, retryAfter string) reply {
	r := reply{status: status, body: fmt.Sprintf(`{"error":{"code":%q,"message":"scripted %s"}}`, code, code)}
	if code == "" {
		r.body = `{"message":"` + http.StatusText(status) + `"}` // API Gateway's own answer
	}
	if retryAfter != "" {
		r.header = map[string]string{"Retry-After": retryAfter}
	}
	return r
}

var created = reply{status: 201, body: `{"gameInstanceId":"gi-r","state":"Allocated","fallbackUsed":false,"attempts":[]}`}

// gaps are the waits between consecutive requests.
func gaps(got []seen) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(got); i++ {
		out = append(out, got[i].at.Sub(got[i-1].at))
	}
	return out
}

func TestAllocateRetriesWithTheSameBody(t *testing.T) {
	inTwoSeconds := errReply(503, CodeServiceUnavailable, "")
	inTwoSeconds.retryAt = 2 * time.Second
	// Upper bounds leave room for a loaded machine; each is still far
	// below what a wrong wait would be (MaxWait's 10 s, a Retry-After of 30 s).
	tests := []struct {
		name             string
		opts             Options
		replies          []reply
		wantTries        int
		minGap, maxGap   time.Duration
		wantCode         string // "" = success
		wantNotRetryable bool
	}{
		{"Retry-After seconds honoured", Options{}, []reply{errReply(409, CodeAllocationInProgress, "1"), created},
			2, time.Second, 2 * time.Second, "", false},
		{"Retry-After as an HTTP date", Options{}, []reply{inTwoSeconds, created},
			2, 950 * time.Millisecond, 3 * time.Second, "", false}, // the date has whole seconds
		{"Retry-After capped by MaxWait", Options{MaxWait: 200 * time.Millisecond}, []reply{errReply(503, CodeNoCapacity, "30"), created},
			2, 200 * time.Millisecond, 1500 * time.Millisecond, "", false},
		{"no Retry-After: jittered backoff", Options{}, []reply{errReply(503, "", ""), errReply(502, "", ""), created},
			3, 125 * time.Millisecond, 1500 * time.Millisecond, "", false},
		{"transport error", Options{}, []reply{{drop: true}, created},
			2, 125 * time.Millisecond, 1500 * time.Millisecond, "", false},
		{"gateway throttling", Options{MaxWait: 10 * time.Millisecond}, []reply{errReply(429, "", ""), created}, 2, 0, time.Second, "", false},
		{"rate limited", Options{MaxWait: 10 * time.Millisecond}, []reply{errReply(429, CodeRateLimited, "2"), created}, 2, 0, time.Second, "", false},
		{"upstream timeout", Options{MaxWait: 10 * time.Millisecond}, []reply{errReply(504, CodeUpstreamTimeout, "2"), created}, 2, 0, time.Second, "", false},
		{"bounded by MaxAttempts", Options{MaxAttempts: 3, MaxWait: 10 * time.Millisecond}, []reply{errReply(503, CodeNoCapacity, "5")},
			3, 0, time.Second, CodeNoCapacity, false},
		{"MaxAttempts 1: no retry", Options{MaxAttempts: 1}, []reply{errReply(409, CodeAllocationInProgress, "1")},
			1, 0, 0, CodeAllocationInProgress, false},
		{"INVALID_REQUEST not retried", Options{}, []reply{errReply(400, CodeInvalidRequest, "")}, 1, 0, 0, CodeInvalidRequest, true},
		{"IDEMPOTENCY_MISMATCH not retried", Options{}, []reply{errReply(409, CodeIdempotencyMismatch, "")}, 1, 0, 0, CodeIdempotencyMismatch, true},
		{"ALLOCATION_FAILED not retried", Options{}, []reply{errReply(502, CodeAllocationFailed, "")}, 1, 0, 0, CodeAllocationFailed, true},
		{"INTERNAL not retried", Options{}, []reply{errReply(500, CodeInternal, "")}, 1, 0, 0, CodeInternal, true},
		{"METHOD_NOT_ALLOWED not retried", Options{}, []reply{errReply(405, CodeMethodNotAllowed, "")}, 1, 0, 0, CodeMethodNotAllowed, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, s := newScripted(t, tc.opts, tc.replies...)
			a, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-r", DesiredRegion: "us-west",
				PartnerGameToken: "a-token-of-the-callers-own-choosing-0123456789"})
			got := s.requests()
			if len(got) != tc.wantTries {
				t.Fatalf("%d tries, want %d (err %v)", len(got), tc.wantTries, err)
			}
			for _, r := range got {
				if r.method != http.MethodPost || r.path != "/v1/allocations" || !bytes.Equal(r.body, got[0].body) ||
					!bytes.Contains(r.body, []byte(`"gameInstanceId":"gi-r"`)) || r.header.Get("Authorization") != "" {
					t.Fatalf("try %s %s %s (Authorization %q), first %s", r.method, r.path, r.body, r.header.Get("Authorization"), got[0].body)
				}
			}
			for _, g := range gaps(got) {
				if g < tc.minGap || g > tc.maxGap {
					t.Errorf("waited %s between tries, want %s–%s", g, tc.minGap, tc.maxGap)
				}
			}
			if tc.wantCode == "" {
				if err != nil || a == nil || !a.Created {
					t.Fatalf("allocation %+v, err %v", a, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.wantCode || e.Retryable() == tc.wantNotRetryable || !IsCode(err, tc.wantCode) {
				t.Fatalf("err = %v, want an *Error %s", err, tc.wantCode)
			}
			if strings.Contains(err.Error(), "a-token-of-the-callers-own") {
				t.Fatalf("the error shows the token: %v", err)
			}
		})
	}
}

func TestGetAndEndRetry(t *testing.T) {
	record := reply{status: 200, body: `{"gameInstanceId":"gi/odd:1","state":"Ended","fallbackUsed":false,"attempts":[]}`}
	tests := []struct {
		name      string
		call      func(*Client) (*Allocation, error)
		replies   []reply
		method    string
		wantTries int
		wantCode  string
	}{
		{"GET after 503", func(c *Client) (*Allocation, error) { return c.Get(context.Background(), "gi/odd:1") },
			[]reply{errReply(503, CodeServiceUnavailable, "1"), record}, http.MethodGet, 2, ""},
		{"GET 404 is final", func(c *Client) (*Allocation, error) { return c.Get(context.Background(), "gi/odd:1") },
			[]reply{errReply(404, CodeNotFound, "")}, http.MethodGet, 1, CodeNotFound},
		{"DELETE while allocating", func(c *Client) (*Allocation, error) { return c.End(context.Background(), "gi/odd:1") },
			[]reply{errReply(409, CodeAllocationInProgress, "1"), record}, http.MethodDelete, 2, ""},
		{"DELETE of a Failed one is final", func(c *Client) (*Allocation, error) { return c.End(context.Background(), "gi/odd:1") },
			[]reply{{status: 409, body: `{"error":{"code":"INVALID_STATE","message":"failed","state":"Failed"}}`}}, http.MethodDelete, 1, CodeInvalidState},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, s := newScripted(t, Options{MaxWait: 20 * time.Millisecond}, tc.replies...)
			a, err := tc.call(c)
			got := s.requests()
			if len(got) != tc.wantTries {
				t.Fatalf("%d tries, want %d", len(got), tc.wantTries)
			}
			for _, r := range got {
				if r.method != tc.method || r.path != "/v1/allocations/gi%2Fodd:1" {
					t.Fatalf("sent %s %s", r.method, r.path)
				}
			}
			if tc.wantCode == "" {
				if err != nil || a.State != StateEnded || a.Created {
					t.Fatalf("%+v %v", a, err)
				}
				return
			}
			if !IsCode(err, tc.wantCode) {
				t.Fatalf("err = %v, want %s", err, tc.wantCode)
			}
		})
	}
	c, _ := newScripted(t, Options{}, record)
	if _, err := c.Get(context.Background(), ""); !errors.Is(err, ErrNoGameInstanceID) {
		t.Fatalf("Get(\"\") = %v", err)
	}
}

func TestContextStopsTheWait(t *testing.T) {
	c, s := newScripted(t, Options{MaxWait: time.Minute}, errReply(409, CodeAllocationInProgress, "30"))

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Allocate(ctx, AllocateRequest{GameInstanceID: "gi-r"})
	if took := time.Since(start); took > 2*time.Second || len(s.requests()) != 1 {
		t.Fatalf("returned after %s and %d tries", took, len(s.requests()))
	}
	if !errors.Is(err, context.Canceled) || !IsCode(err, CodeAllocationInProgress) {
		t.Fatalf("err = %v, want the cancellation and the last answer", err)
	}

	// A deadline the wait would pass: the last answer at once, no waiting.
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start = time.Now()
	_, err = c.Allocate(ctx, AllocateRequest{GameInstanceID: "gi-r"})
	if took := time.Since(start); took > time.Second || !IsCode(err, CodeAllocationInProgress) {
		t.Fatalf("after %s: %v", took, err)
	}
}

func TestReadsAreBounded(t *testing.T) {
	huge := strings.Repeat("x", maxAllocationAnswer+10)
	tests := []struct {
		name  string
		reply reply
	}{
		{"a success", reply{status: 200, body: `{"gameInstanceId":"` + huge + `"}`}},
		{"an error", reply{status: 503, body: huge}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newScripted(t, Options{}, tc.reply)
			_, err := c.Get(context.Background(), "gi-r")
			if !errors.Is(err, ErrAnswerTooLarge) || len(s.requests()) != 1 {
				t.Fatalf("err = %v after %d tries", err, len(s.requests()))
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		want  string
	}{
		{"service", errReply(409, CodeIdempotencyMismatch, ""), "allocclient: GET /v1/allocations/{gameInstanceId}: 409 IDEMPOTENCY_MISMATCH: scripted IDEMPOTENCY_MISMATCH"},
		{"gateway", errReply(403, "", ""), "allocclient: GET /v1/allocations/{gameInstanceId}: 403 Forbidden: Forbidden"},
		{"not JSON", reply{status: 404, body: "<html>\n<b>no\x00such</b>\n" + strings.Repeat("y", 300)}, "allocclient: GET /v1/allocations/{gameInstanceId}: 404 Not Found: <html> <b>no such</b> " + strings.Repeat("y", 256-22)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newScripted(t, Options{}, tc.reply)
			_, err := c.Get(context.Background(), "gi-r")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []Options{
		{BaseURL: ""}, {BaseURL: "ftp://x"}, {BaseURL: "http://"}, {BaseURL: "http://u:p@x"}, {BaseURL: "http://x?a=1"},
		{BaseURL: "http://x", MaxAttempts: -1}, {BaseURL: "http://x", MaxWait: -time.Second},
		{BaseURL: "http://x", Credentials: staticCreds}, // no Region
	}
	for _, o := range tests {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestBaseURLPathIsKept(t *testing.T) {
	s := &scripted{replies: []reply{created}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL + "/prod/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-r"}); err != nil {
		t.Fatal(err)
	}
	if got := s.requests()[0].path; got != "/prod/v1/allocations" {
		t.Fatalf("path %s", got)
	}
}
