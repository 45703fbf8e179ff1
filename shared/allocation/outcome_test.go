package allocation

import (
	"errors"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestFailureCode(t *testing.T) {
	// a: one attempt per region; same: attempts in one region.
	a := func(o ...outcome) []attempt {
		var out []attempt
		for i, x := range o {
			out = append(out, attempt{Attempt: gameinstance.Attempt{Region: string(rune('a' + i))}, outcome: x})
		}
		return out
	}
	same := func(o ...outcome) []attempt {
		out := a(o...)
		for i := range out {
			out[i].Region = "a"
		}
		return out
	}
	tests := []struct {
		name     string
		attempts []attempt
		want     gameinstance.Code
	}{
		{"all capacity", a(outcomeCapacity, outcomeCapacity), gameinstance.CodeNoCapacity},
		{"capacity then timeout", a(outcomeCapacity, outcomeTimeout), gameinstance.CodeUpstreamTimeout},
		{"timeout only", a(outcomeTimeout), gameinstance.CodeUpstreamTimeout},
		{"timeout then no time for fallback", a(outcomeTimeout, outcomeSkipped), gameinstance.CodeUpstreamTimeout},
		{"nothing tried", a(outcomeSkipped), gameinstance.CodeUpstreamTimeout},
		{"server error then capacity", a(outcomeFailed, outcomeCapacity), gameinstance.CodeAllocationFailed},
		{"timeout then server error", a(outcomeTimeout, outcomeFailed), gameinstance.CodeAllocationFailed},
		{"capacity then skipped", a(outcomeCapacity, outcomeSkipped), gameinstance.CodeNoCapacity},
		{"rate-limited", a(outcomeRateLimited), gameinstance.CodeRateLimited},
		{"rate-limited, then skipped for it", a(outcomeRateLimited, outcomeRateLimitSkipped), gameinstance.CodeRateLimited},
		{"rate-limited and no capacity", a(outcomeCapacity, outcomeRateLimited), gameinstance.CodeRateLimited},
		{"rate-limited and a timeout", a(outcomeRateLimited, outcomeTimeout), gameinstance.CodeUpstreamTimeout},
		{"rate-limited and a server error", a(outcomeRateLimited, outcomeFailed), gameinstance.CodeAllocationFailed},
		{"no token for one Allocator, no capacity on the other", a(outcomeNoToken, outcomeCapacity), gameinstance.CodeAllocationFailed},
		{"429 retried into 503", same(outcomeRateLimited, outcomeCapacity), gameinstance.CodeNoCapacity},
		{"401 cured, then 503", same(outcomeFailed, outcomeCapacity), gameinstance.CodeNoCapacity},
		{"429 and then no time to retry", same(outcomeRateLimited, outcomeSkipped), gameinstance.CodeRateLimited},
	}
	for _, tc := range tests {
		if got := failureCode(tc.attempts); got != tc.want {
			t.Errorf("%s: failureCode = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestWait429(t *testing.T) {
	p := RetryPolicy{Max429Retries: 2, BaseBackoff: 100 * time.Millisecond, MaxWait: 2 * time.Second}
	tests := []struct {
		name       string
		retry      int
		retryAfter time.Duration
		remaining  time.Duration
		want       time.Duration
		ok         bool
	}{
		{"first backoff", 0, 0, time.Minute, 100 * time.Millisecond, true},
		{"second backoff doubles", 1, 0, time.Minute, 200 * time.Millisecond, true},
		{"retries exhausted", 2, 0, time.Minute, 0, false},
		{"retry-after honoured", 0, time.Second, time.Minute, time.Second, true},
		{"retry-after too long moves on", 0, 5 * time.Second, time.Minute, 0, false},
		{"no time left", 0, 0, 50 * time.Millisecond, 0, false},
	}
	for _, tc := range tests {
		got, ok := p.wait429(tc.retry, tc.retryAfter, tc.remaining)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: wait429 = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestClassifyError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want outcome
	}{
		{"404 no server", status(404, 0), outcomeCapacity},
		{"409", status(409, 0), outcomeCapacity},
		{"429 is the rate limit, not capacity", status(429, 0), outcomeRateLimited},
		{"503", status(503, 0), outcomeCapacity},
		{"504 from the allocator's gateway", status(504, 0), outcomeTimeout},
		{"our timeout", timeout, outcomeTimeout},
		{"400", status(400, 0), outcomeFailed},
		{"500", status(500, 0), outcomeFailed},
		{"502", status(502, 0), outcomeFailed},
		{"undecodable", &UpstreamError{Kind: UpstreamDecode}, outcomeFailed},
		{"reset", &UpstreamError{Kind: UpstreamTransport}, outcomeFailed},
		{"not ours", errors.New("x"), outcomeFailed},
	}
	for _, tc := range tests {
		if got := classifyError(tc.err); got != tc.want {
			t.Errorf("%s: classifyError = %v, want %v", tc.name, got, tc.want)
		}
	}
}
