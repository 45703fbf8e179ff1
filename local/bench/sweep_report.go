package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/sweepload"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
)

// sweepRows is the summary's line for the sweep phase; none when skipped.
func (r *Report) sweepRows() []summaryRow {
	sw := r.Sweep
	if len(sw.Runs) == 0 {
		return nil
	}
	var parts []string
	for _, run := range sw.Runs {
		parts = append(parts, fmt.Sprint(run.Reviewed))
	}
	lo, hi := sw.rateRange()
	return []summaryRow{{fmt.Sprintf("Health sweep: runs to mark %d due instances (%s each)", sw.Instances, secs(sw.RunTimeout)),
		fmt.Sprintf("%d runs (%s; %.0f–%.0f reviews/s); %d starved a shard", len(sw.Runs), strings.Join(parts, " + "), lo, hi, sw.StarvedRuns()),
		"all marked, no shard starved", met(sw.AllMarked())}}
}

func (sw SweepResult) rateRange() (lo, hi float64) {
	for i, run := range sw.Runs {
		if i == 0 || run.PerSecond < lo {
			lo = run.PerSecond
		}
		hi = max(hi, run.PerSecond)
	}
	return lo, hi
}

// sweepFloor is the review rate below which the deadline, not the cap,
// ends a run of the Lambda's timeout: SweepLimit over the time it dispatches.
func sweepFloor() float64 {
	dispatch := sweepload.LambdaTimeout - max(lifecycle.SweepMinMargin, sweepload.LambdaTimeout/10)
	return float64(lifecycle.SweepLimit) / dispatch.Seconds()
}

func (r *Report) sweepMD(b *strings.Builder) {
	sw := r.Sweep
	if len(sw.Runs) == 0 {
		return
	}
	b.WriteString("\n## Health sweep backlog\n\n")
	fmt.Fprintf(b, "%d due instances (%d — 1 in %d — `Linked` past their heartbeat deadline, the others `Allocated` past their link deadline) "+
		"written with `BatchWriteItem` into a fresh `GameInstancesTable` on a DynamoDB Local of the phase's own, with no stack beside it (in %s); "+
		"then `Sweep` run after run as `HealthSweepFunction` runs it — each run under a %s deadline (the function's `Timeout`), the clock a "+
		"minute on per run — until the index holds nothing due (`local/sweepload`, shared with the 20,000-instance integration test). "+
		"A run takes on at most `SweepLimit` = %d due instances, fairly over the 16 index shards, reviews %d at once and stops dispatching "+
		"max(%s, 10 %%) before its deadline.\n\n",
		sw.Instances, sw.Instances/sweepload.LinkedEvery, sweepload.LinkedEvery, sw.SeedTook.Round(time.Millisecond), secs(sw.RunTimeout), lifecycle.SweepLimit,
		lifecycle.SweepWorkers, secs(lifecycle.SweepMinMargin))
	b.WriteString("| Run | First shard | Taken on | Reviewed | Time | Reviews/s | Reviews per shard (min–max) | Stopped at the deadline | Left for the next run | Failures |\n" +
		"|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|\n")
	for i, run := range sw.Runs {
		fmt.Fprintf(b, "| %d | %02d | %d | %d | %s | %.0f | %d–%d | %s | %d | %d |\n", i+1, run.FirstShard, run.TakenOn, run.Reviewed,
			run.Took.Round(time.Millisecond), run.PerSecond, run.MinShard, run.MaxShard, map[bool]string{true: "yes", false: "no"}[run.StoppedEarly],
			run.Remaining, run.Failures)
	}
	fmt.Fprintf(b, "\n**%d runs** marked the %d instances (stored afterwards: %s) in %s of sweeping, %.0f a second overall; "+
		"**%d runs left a shard with due instances untouched** (the index counted per shard before and after each run).",
		len(sw.Runs), sw.Instances, statesText(sw.States), sw.Took.Round(time.Millisecond), float64(sw.Instances)/sw.Took.Seconds(), sw.StarvedRuns())
	stopped := false
	for _, run := range sw.Runs {
		stopped = stopped || run.StoppedEarly
	}
	if stopped {
		b.WriteString(" Runs that reached their deadline left the rest to the next run, so here time, not the cap, set the number of runs.\n")
		return
	}
	fmt.Fprintf(b, " No run reached its deadline: here the cap, not time, set the number of runs. A run is bound by time instead "+
		"wherever it reviews fewer than %.0f a second (%d in the %s it dispatches) — a 128 MB Lambda has about 1/14 of a vCPU, not two shared "+
		"cores, and this machine cannot tell how fast it reviews — and then a backlog this size takes more runs; each run's result says so "+
		"(`stoppedEarly`, `remaining`).\n", sweepFloor(), lifecycle.SweepLimit, secs(sweepload.LambdaTimeout-max(lifecycle.SweepMinMargin, sweepload.LambdaTimeout/10)))
}

// secs writes a whole-second duration as "60 s".
func secs(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

func statesText(states map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(states)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, states[k]))
	}
	return strings.Join(parts, ", ")
}

// sweepText is the sweep phase's lines of the stdout table.
func (r *Report) sweepText(b *strings.Builder) {
	sw := r.Sweep
	if len(sw.Runs) == 0 {
		return
	}
	fmt.Fprintf(b, "\nhealth sweep, %d due instances, runs of %s:\n", sw.Instances, secs(sw.RunTimeout))
	for i, run := range sw.Runs {
		fmt.Fprintf(b, "  run %d: took on %5d, reviewed %5d in %s (%4.0f/s), per shard %d–%d, stopped early %v, %d left\n",
			i+1, run.TakenOn, run.Reviewed, run.Took.Round(time.Millisecond), run.PerSecond, run.MinShard, run.MaxShard, run.StoppedEarly, run.Remaining)
	}
}
