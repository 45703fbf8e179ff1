package bench

import (
	"math"
	"testing"
	"time"
)

func ms(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

func TestSummarizeNearestRank(t *testing.T) {
	var hundred []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"none", nil, Summary{}},
		{"one", ms(7), Summary{N: 1, Min: 7e6, P50: 7e6, P90: 7e6, P99: 7e6, Mean: 7e6, Max: 7e6}},
		{"odd: p50 is the middle", ms(30, 10, 20, 50, 40), Summary{N: 5, Min: 10e6, P50: 30e6, P90: 50e6, P99: 50e6, Mean: 30e6, Max: 50e6}},
		{"even: p50 is the lower middle", ms(40, 10, 30, 20), Summary{N: 4, Min: 10e6, P50: 20e6, P90: 40e6, P99: 40e6, Mean: 25e6, Max: 40e6}},
		{"ten: p90 is the 9th", ms(10, 1, 9, 2, 8, 3, 7, 4, 6, 5), Summary{N: 10, Min: 1e6, P50: 5e6, P90: 9e6, P99: 10e6, Mean: 5500e3, Max: 10e6}},
		{"hundred: p99 is the 99th", hundred, Summary{N: 100, Min: 1e6, P50: 50e6, P90: 90e6, P99: 99e6, Mean: 50500e3, Max: 100e6}},
	} {
		if got := Summarize(c.in); got != c.want {
			t.Errorf("%s: Summarize = %+v, want %+v", c.name, got, c.want)
		}
	}
	if in := ms(30, 10, 20); Summarize(in).N != 3 || in[0] != 30*time.Millisecond {
		t.Errorf("Summarize reordered the caller's samples: %v", in)
	}
}

func TestRatiosAndCounts(t *testing.T) {
	for _, c := range []struct {
		a, b time.Duration
		want float64
	}{{13, 10, 1.3}, {10, 10, 1}, {1, 0, math.NaN()}} {
		got := durRatio(c.a, c.b)
		if math.IsNaN(c.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-c.want) > 1e-9) {
			t.Errorf("durRatio(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		in   Counts
		want string
	}{{nil, "none"}, {Counts{"409 ALLOCATION_IN_PROGRESS": 175, "201": 25}, "201 ×25, 409 ALLOCATION_IN_PROGRESS ×175"}} {
		if got := c.in.String(); got != c.want {
			t.Errorf("Counts%v = %q, want %q", map[string]int(c.in), got, c.want)
		}
	}
}
