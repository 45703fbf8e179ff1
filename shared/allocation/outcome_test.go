package allocation

import (
	"testing"
	"time"
)

func TestFailureCode(t *testing.T) {
	a := func(o ...outcome) []Attempt {
		var out []Attempt
		for _, x := range o {
			out = append(out, Attempt{outcome: x})
		}
		return out
	}
	tests := []struct {
		name     string
		attempts []Attempt
		want     Code
	}{
		{"all capacity", a(outcomeCapacity, outcomeCapacity), CodeNoCapacity},
		{"capacity then timeout", a(outcomeCapacity, outcomeTimeout), CodeUpstreamTimeout},
		{"timeout only", a(outcomeTimeout), CodeUpstreamTimeout},
		{"timeout then no time for fallback", a(outcomeTimeout, outcomeSkipped), CodeUpstreamTimeout},
		{"nothing tried", a(outcomeSkipped), CodeUpstreamTimeout},
		{"server error then capacity", a(outcomeFailed, outcomeCapacity), CodeAllocationFailed},
		{"timeout then server error", a(outcomeTimeout, outcomeFailed), CodeAllocationFailed},
		{"capacity then skipped", a(outcomeCapacity, outcomeSkipped), CodeNoCapacity},
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
