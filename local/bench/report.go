package bench

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// summaryRow is one line of the summary table, shared by Markdown and Text.
type summaryRow struct {
	Figure, Measured, Goal string
	Met                    *bool // nil: no goal
}

func met(ok bool) *bool { return &ok }

func (r *Report) summary() []summaryRow {
	var rows []summaryRow
	if cs := r.ColdStart; cs != nil {
		worst := FunctionColdStart{}
		for _, f := range cs.Functions {
			if f.First.Ratio >= worst.First.Ratio {
				worst = f
			}
		}
		rows = append(rows, summaryRow{"1. Cold start, median first response ÷ hello-world's",
			fmt.Sprintf("worst %.2f× (%s)", worst.First.Ratio, worst.Name), fmt.Sprintf("≤ %.1f×", cs.GoalRatio), met(cs.AllMeetGoal())})
	}
	if sz := r.Sizes; sz != nil {
		largest := BinarySize{}
		for _, f := range sz.Functions {
			if f.Bytes >= largest.Bytes {
				largest = f
			}
		}
		rows = append(rows, summaryRow{"1. Binary size (stripped linux/arm64)",
			fmt.Sprintf("largest %.2f MB (%s)", largest.MB(), largest.Name), fmt.Sprintf("≤ %g MB", float64(SizeGoalBytes)/1e6), met(sz.AllMeetGoal())})
	}
	ov := r.Overhead
	rows = append(rows,
		summaryRow{"2. Allocate overhead, p50 (stack ÷ direct)", fmt.Sprintf("%s ÷ %s = %.2f×", fmtMs(ov.E2E.P50), fmtMs(ov.Direct.P50), ov.RatioP50),
			fmt.Sprintf("≤ %.2f×", OverheadGoal), met(ov.RatioP50 <= OverheadGoal)},
		summaryRow{"2. Allocate overhead, p99", fmt.Sprintf("%s ÷ %s = %.2f×", fmtMs(ov.E2E.P99), fmtMs(ov.Direct.P99), ov.RatioP99), "—", nil})
	q := r.Requests
	fresh := perAlloc(q.Fresh, onTable(q.GameInstancesTable))
	rows = append(rows, summaryRow{"2. DynamoDB requests per fresh allocation (SDK middleware)",
		fmt.Sprintf("%.2f (+ %.3f amortised health reads)", fresh, perAlloc(q.Fresh, onTable(q.RegionHealthTable))), "≤ 2", met(fresh <= 2)})
	fb := r.Fallback
	rows = append(rows, summaryRow{"3. Fallback cost beyond the two round trips, p50", fmt.Sprintf("%s (paired %s)", fmtMs(fb.Extra), fmtMs(fb.PairedExtra)),
		"≤ " + fmtMs(FallbackGoal), met(fb.Extra <= FallbackGoal)})
	if best, ok := r.bestThroughput(); ok {
		rows = append(rows, summaryRow{"4. Throughput, best sustained", fmt.Sprintf("%.0f allocations/s (%d sandboxes, %d callers)", best.PerSecond, best.PoolSize, best.Callers), "—", nil})
	}
	doubles, instances := 0, 0
	for _, in := range r.Integrity {
		doubles += in.DoubleAllocated + in.Mismatched
		instances += in.Instances
	}
	doubles += r.Race.MultipleCreated
	rows = append(rows, summaryRow{"4. Game instances given two servers", fmt.Sprintf("%d of %d", doubles, instances), "0", met(doubles == 0 && instances > 0)})
	if len(r.Costs) > 0 {
		worst := slices.MaxFunc(r.Costs, func(a, b Scenario) int { return cmpFloat(a.Total, b.Total) })
		var parts []string
		for _, sc := range r.Costs {
			parts = append(parts, fmt.Sprintf("$%.2f at %s", sc.Total, sc.Name))
		}
		rows = append(rows, summaryRow{"5. AWS cost per 1M allocations (logs apart)", strings.Join(parts, "; "),
			fmt.Sprintf("≤ $%.2f", CostGoal), met(worst.Total <= CostGoal)})
		rows = append(rows, summaryRow{"5. … with CloudWatch Logs ingestion", fmt.Sprintf("$%.2f (worst scenario)", worst.WithLogs), "—", nil})
	}
	if l := r.Lifecycle; l.Heartbeat.N > 0 {
		rows = append(rows, summaryRow{"5. The game server's calls, per 1M " + typicalGame.String() + " games (link, heartbeat every " +
			HeartbeatEvery.String() + ", end)", fmt.Sprintf("$%.0f", l.PerGame), "—", nil})
	}
	rows = append(rows, r.sweepRows()...)
	return rows
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (r *Report) bestThroughput() (ThroughputLevel, bool) {
	if len(r.Throughput) == 0 {
		return ThroughputLevel{}, false
	}
	return slices.MaxFunc(r.Throughput, func(a, b ThroughputLevel) int { return cmpFloat(a.PerSecond, b.PerSecond) }), true
}

func mark(m *bool) string {
	switch {
	case m == nil:
		return "—"
	case *m:
		return "✅ yes"
	}
	return "❌ no"
}

// Text is the table printed to stdout.
func (r *Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nallocsvc benchmarks — %s, %d cores, %s, commit %s, %s\n\n", r.Machine.CPU, r.Machine.Cores,
		r.Machine.Date.Format("2006-01-02 15:04 MST"), r.Machine.Commit, r.Took.Round(time.Second))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "figure\tmeasured\tgoal\tmet")
	for _, row := range r.summary() {
		m := "-"
		if row.Met != nil {
			m = map[bool]string{true: "yes", false: "NO"}[*row.Met]
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", row.Figure, row.Measured, row.Goal, m)
	}
	_ = w.Flush()
	if r.ColdStart != nil {
		b.WriteString("\n" + r.ColdStart.Text())
	}
	if r.Sizes != nil {
		b.WriteString("\n" + r.Sizes.Text())
	}
	b.WriteString("\nthroughput:\n")
	for _, l := range r.Throughput {
		fmt.Fprintf(&b, "  pool %2d, %2d callers: %4.0f/s  p50 %s  p99 %s  %s\n", l.PoolSize, l.Callers, l.PerSecond, fmtMs(l.Latency.P50), fmtMs(l.Latency.P99), l.Outcomes)
	}
	for _, f := range r.Bottleneck.Findings {
		b.WriteString("  " + f + "\n")
	}
	for _, sc := range r.Costs {
		fmt.Fprintf(&b, "\ncost per 1M allocations, %s:\n", sc.Name)
		for _, l := range sc.Lines {
			fmt.Fprintf(&b, "  %-46s $%7.4f  %s\n", l.Item, l.USD, l.Basis)
		}
		fmt.Fprintf(&b, "  %-46s $%7.4f  (goal ≤ $%.2f; with logs $%.4f)\n", "total", sc.Total, CostGoal, sc.WithLogs)
	}
	if l := r.Lifecycle; l.Heartbeat.N > 0 {
		fmt.Fprintf(&b, "\nlink-back calls, USD per 1M: link $%.2f, heartbeat $%.2f, end $%.2f; a %s game $%.0f per 1M games\n",
			l.Link.USDPerMillion, l.Heartbeat.USDPerMillion, l.End.USDPerMillion, typicalGame, l.PerGame)
	}
	r.sweepText(&b)
	for _, e := range r.Errors {
		b.WriteString("\nFAILED: " + e + "\n")
	}
	return b.String()
}
