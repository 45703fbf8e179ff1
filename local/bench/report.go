package bench

import (
	_ "embed"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"text/template"
	"time"
)

// reportTemplate is docs/benchmarks.md; its "summary" is what make bench
// prints.
//
//go:embed report.md.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":      fmtMs,                                                                // 12.3 ms
	"msn":     func(d time.Duration) string { return fmt.Sprintf("%.1f", toMs(d)) }, // 12.3
	"msn2":    func(d time.Duration) string { return fmt.Sprintf("%.2f", toMs(d)) }, // 0.12
	"msr":     func(d time.Duration) time.Duration { return d.Round(time.Millisecond) },
	"sec":     func(d time.Duration) time.Duration { return d.Round(time.Second) },
	"secs":    func(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) },
	"s2":      fmtSec, // 1.23 s
	"x":       func(r float64) string { return fmt.Sprintf("%.2f×", r) },
	"pct":     func(share float64) string { return fmt.Sprintf("%.0f%%", 100*share) },
	"share":   func(share float64) string { return fmt.Sprintf("%.1f %%", 100*share) }, // of a CPU
	"mark":    func(ok bool) string { return map[bool]string{true: "✅ yes", false: "❌ no"}[ok] },
	"goal":    func(ok bool) string { return map[bool]string{true: "yes", false: "**no**"}[ok] }, // in the per-function tables
	"add":     func(a, b float64) float64 { return a + b },
	"sub2":    func(a, b float64) float64 { return a - b },
	"div":     func(a, b float64) float64 { return a / max(b, 1e-9) },
	"quarter": func(d time.Duration) time.Duration { return d / 4 },
	"sub":     func(a, b int) int { return a - b },
	"calls":   func(sc LifecycleScenario) []LifecycleCall { return []LifecycleCall{sc.Link, sc.Heartbeat, sc.End} },
}).Parse(reportTemplate))

// Markdown is docs/benchmarks.md.
func (r *Report) Markdown() (string, error) { return r.render("report") }

// Summary is the summary table make bench prints, and the failed phases.
func (r *Report) Summary() (string, error) {
	s, err := r.render("summary")
	for _, e := range r.Errors {
		s += "\nFAILED: " + e + "\n"
	}
	return s, err
}

func (r *Report) render(name string) (string, error) {
	var b strings.Builder
	if err := reportTmpl.ExecuteTemplate(&b, name, r); err != nil {
		return "", fmt.Errorf("render the report: %w", err)
	}
	return b.String(), nil
}

// Summary describes a set of latencies. Percentiles are nearest-rank, so
// each is an observed sample.
type Summary struct {
	N                             int
	Min, P50, P90, P99, Mean, Max time.Duration
}

// Summarize sorts a copy of ds.
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

func fmtMs(d time.Duration) string { return fmt.Sprintf("%.1f ms", toMs(d)) }

func fmtSec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func toMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// durRatio is a/b, NaN when b is zero: a missing baseline never meets a goal.
func durRatio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Counts tallies outcomes such as "201" or "409 ALLOCATION_IN_PROGRESS".
type Counts map[string]int

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

// keep appends d to samples, or counts err under prefix.
func (c Counts) keep(samples []time.Duration, d time.Duration, err error, prefix string) []time.Duration {
	if err != nil {
		c[prefix+err.Error()]++
		return samples
	}
	return append(samples, d)
}
