package bench

import (
	_ "embed"
	"fmt"
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

// Summary is the summary table, printed at the end of make bench, followed
// by the phases that failed.
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
