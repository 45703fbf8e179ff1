package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Summary describes a set of latencies. Percentiles are nearest-rank, so
// each is an observed sample: with N=200 the p99 is the 198th value, and
// with an odd N the p50 is the middle one.
type Summary struct {
	N                             int
	Min, P50, P90, P99, Mean, Max time.Duration
}

// Summarize sorts a copy of ds; the caller's order is kept.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Sorted(slices.Values(ds))
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	rank := func(p float64) time.Duration {
		return s[max(0, min(int(math.Ceil(p*float64(len(s))))-1, len(s)-1))]
	}
	return Summary{N: len(s), Min: s[0], P50: rank(0.50), P90: rank(0.90), P99: rank(0.99),
		Mean: sum / time.Duration(len(s)), Max: s[len(s)-1]}
}

// fmtMs formats a duration in milliseconds with 0.1 ms resolution.
func fmtMs(d time.Duration) string { return fmt.Sprintf("%.1f ms", toMs(d)) }

// fmtSec formats a duration in seconds with 0.01 s resolution.
func fmtSec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// toMs is d in (fractional) milliseconds.
func toMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// durRatio is a/b, or NaN when b is zero (a missing baseline never meets a goal).
func durRatio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Counts tallies outcomes such as "201" or "409 ALLOCATION_IN_PROGRESS".
type Counts map[string]int

// String lists the outcomes in order: "201 ×25, 409 ALLOCATION_IN_PROGRESS ×175".
func (c Counts) String() string {
	if len(c) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(c))
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

// keep appends d to samples, or counts err under prefix when the call failed.
func (c Counts) keep(samples []time.Duration, d time.Duration, err error, prefix string) []time.Duration {
	if err != nil {
		c[prefix+err.Error()]++
		return samples
	}
	return append(samples, d)
}
