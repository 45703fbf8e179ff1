package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Statistics.

// csMedian is the middle sample (the mean of the two middle ones for an even
// count); 0 for no samples.
func csMedian(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// csPercentile is the nearest-rank percentile (p in 0..100): always an
// observed sample, 0 gives the minimum and 100 the maximum; 0 for no samples.
func csPercentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return rank(slices.Sorted(slices.Values(d)), p/100)
}

// csMillis formats a duration in milliseconds with one decimal.
func csMillis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func csTimes(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) + "×" }

// Reports.

// Markdown is the cold-start section of docs/benchmarks.md.
func (r *ColdStartReport) Markdown() string {
	var b strings.Builder
	b.WriteString("### Cold start\n\n")
	fmt.Fprintf(&b, "One start is a fresh process of the function's real `bootstrap`, driven through the Lambda Runtime API harness "+
		"(`local/harness/runtimeapi`), timed from just before the process starts until the response to its first invocation reaches the harness. "+
		"*Init* is the harness's init duration (process start to the first `/next` poll), Lambda's \"Init Duration\". "+
		"Each row is %d starts after one discarded warm-up round; every round starts each binary once, round-robin, one process at a time, "+
		"so machine noise spreads evenly. The baseline is a minimal aws-lambda-go hello-world (`local/bench/hello`) built the same way; "+
		"*× hello* is a median over hello-world's median. Goal: a first-response median at most %.1f× hello-world's. "+
		"*Init × hello* compares init alone, which is what start-up costs even when the first event makes real calls "+
		"(the scheduled functions').\n\n", r.Starts, r.GoalRatio)
	fmt.Fprintf(&b, "Lambda runs arm64, which this machine cannot execute, so the binaries are built for %s with the same flags as `make build` "+
		"(`CGO_ENABLED=0 -trimpath -tags lambda.norpc -ldflags='-s -w'`). Absolute times differ from Lambda's; the ratio is the figure that carries over. "+
		"Each function gets its template.yaml environment pointed at DynamoDB Local (tables created from template.yaml), "+
		"moto (Secrets Manager, holding the token secrets) and the emulated GameFabric Allocators and Ping Service, all on loopback. "+
		"1-minute load average during the measured starts: %s.\n\n", r.Platform, r.Load)

	fmt.Fprintf(&b, "| Function | Median ms | p90 ms | Min ms | Max ms | Init median ms | Init × hello | × hello | Goal ≤ %.1f× | Realistic first request: median ms (× hello) |\n", r.GoalRatio)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|:---:|---:|\n")
	h := r.Hello
	fmt.Fprintf(&b, "| %s (baseline) | %s | %s | %s | %s | %s | 1.00× | 1.00× | — | — |\n", helloWorldName,
		csMillis(h.Median), csMillis(h.P90), csMillis(h.Min), csMillis(h.Max), csMillis(h.InitMedian))
	for _, f := range r.Functions {
		s := f.First
		realistic := "same as first (scheduled)"
		if f.Realistic != nil {
			realistic = csMillis(f.Realistic.Median) + " (" + csTimes(f.Realistic.Ratio) + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Name, csMillis(s.Median), csMillis(s.P90), csMillis(s.Min), csMillis(s.Max),
			csMillis(s.InitMedian), csTimes(s.InitRatio), csTimes(s.Ratio), csGoalMark(s.MeetsGoal(r.GoalRatio)), realistic)
	}

	b.WriteString("\nFirst events (every start's answer was checked):\n\n")
	fmt.Fprintf(&b, "- **%s**: %s → %s\n", helloWorldName, h.Event, h.Answer)
	for _, f := range r.Functions {
		fmt.Fprintf(&b, "- **%s**, first: %s → %s\n", f.Name, f.First.Event, f.First.Answer)
		if f.Realistic != nil {
			fmt.Fprintf(&b, "- **%s**, realistic (init median %s ms): %s → %s\n", f.Name, csMillis(f.Realistic.InitMedian), f.Realistic.Event, f.Realistic.Answer)
		}
	}
	return b.String()
}

// Text is a compact table for the terminal.
func (r *ColdStartReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cold start, %s host build, %d starts each, ms (goal: median <= %.1fx hello-world; load average %s)\n",
		r.Platform, r.Starts, r.GoalRatio, r.Load)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "function\tmedian\tp90\tmin\tmax\tinit\tinit x\tx hello\tgoal\trealistic\tx hello\t")
	row := func(name string, s ColdStartSeries, goal string, real *ColdStartSeries) {
		rm, rx := "-", "-"
		if real != nil {
			rm, rx = csMillis(real.Median), strconv.FormatFloat(real.Ratio, 'f', 2, 64)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t\n", name, csMillis(s.Median), csMillis(s.P90), csMillis(s.Min), csMillis(s.Max),
			csMillis(s.InitMedian), s.InitRatio, s.Ratio, goal, rm, rx)
	}
	row(helloWorldName, r.Hello, "ref", nil)
	for _, f := range r.Functions {
		row(f.Name, f.First, csGoalWord(f.First.MeetsGoal(r.GoalRatio)), f.Realistic)
	}
	_ = w.Flush()
	return b.String()
}
