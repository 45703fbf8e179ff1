package bench

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Summary describes a set of latencies.
type Summary struct {
	N                   int
	P50, P99, Mean, Max time.Duration
}

// Summarize uses nearest-rank percentiles: with N=200 the p99 is the 198th
// value, a real observation rather than an interpolation.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Summary{N: len(s), P50: rank(s, 0.50), P99: rank(s, 0.99), Mean: sum / time.Duration(len(s)), Max: s[len(s)-1]}
}

func rank(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// fmtMs formats a duration in milliseconds with 0.1 ms resolution.
func fmtMs(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// toMs is d in (fractional) milliseconds.
func toMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// durRatio is a/b, or NaN when b is zero.
func durRatio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Counts tallies outcomes such as "201" or "409 ALLOCATION_IN_PROGRESS".
type Counts map[string]int

func (c Counts) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s ×%d", k, c[k])
	}
	if out == "" {
		return "none"
	}
	return out
}

func fmtF(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// plain prints a price without an exponent: 0.0000133334, not 1.33334e-05.
func plain(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
