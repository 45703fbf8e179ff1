// Command bench measures the service on this machine and writes
// docs/benchmarks.md (`make bench`). The measurements live in local/bench.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/bench"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

func main() {
	o := bench.Options{Log: os.Stderr}
	out := flag.String("out", "docs/benchmarks.md", "where the Markdown report goes (relative to the repository root)")
	workDir := flag.String("workdir", ".cache/bench", "binaries, stack logs and scratch files (relative to the repository root)")
	flag.IntVar(&o.N, "n", 200, "samples for overhead, fallback, billed duration and request counts")
	flag.DurationVar(&o.Delay, "delay", 20*time.Millisecond, "the GameFabric stand-in's fixed allocate delay")
	flag.IntVar(&o.Pool, "pool", 4, "sandboxes per function (local/dev.yaml's api.concurrency)")
	flag.IntVar(&o.BigPool, "bigpool", 16, "sandboxes of the second stack that tests whether the pool binds throughput (0 skips it)")
	callers := flag.String("callers", "8,32,64", "concurrent callers per throughput level")
	flag.IntVar(&o.Throughput.PerLevel, "per-level", 600, "allocations per throughput level at most")
	flag.DurationVar(&o.Throughput.Cap, "level-cap", 20*time.Second, "time per throughput level at most")
	flag.IntVar(&o.RaceInstances, "race-instances", 25, "game instances each requested by -race-callers callers at once")
	flag.IntVar(&o.RaceCallers, "race-callers", 8, "simultaneous callers per race game instance")
	flag.IntVar(&o.ColdStarts, "starts", 15, fmt.Sprintf("cold starts per series (at least %d)", bench.MinStarts))
	flag.IntVar(&o.SweepBacklog, "sweep-backlog", 20000, "due instances the health sweep phase drains (0 skips it)")
	sweepGames := flag.String("sweep-games", "1000,100000", "games in play at which the health sweep's reads are priced (empty skips it)")
	flag.IntVar(&o.Queued.N, "queued", 20, "queued placements timed from capacity returning (0 skips the queued placements' figures)")
	flag.DurationVar(&o.Queued.Dry, "queued-dry", 20*time.Second, "how long their region stays dry (less than their 60 s queue timeout)")
	waits := flag.String("queued-waits", "10s,60s", "the waits at which queued placements are counted and priced")
	flag.IntVar(&o.Queued.CostN, "queued-cost-n", 10, "queued placements counted per wait")
	flag.StringVar(&o.BenchTime, "benchtime", "100ms", "-benchtime of the Go micro-benchmarks")
	timeout := flag.Duration("timeout", 12*time.Minute, "the whole run at most")
	flag.Parse()

	var err error
	if o.Throughput.Callers, err = parseInts(*callers); err != nil {
		fail(fmt.Errorf("-callers: %w", err))
	}
	if *sweepGames != "" {
		if o.SweepGames, err = parseInts(*sweepGames); err != nil {
			fail(fmt.Errorf("-sweep-games: %w", err))
		}
	}
	if o.Queued.Waits, err = parseDurations(*waits); err != nil {
		fail(fmt.Errorf("-queued-waits: %w", err))
	}
	o.Queued.QueueTimeout, o.Queued.Spread = 60, o.Queued.Dry*3/4
	if o.Queued.Dry <= 0 || o.Queued.Dry >= 60*time.Second || o.Queued.CostN < 1 {
		fail(fmt.Errorf("-queued-dry %s must be between 0 and 60 s, -queued-cost-n %d at least 1", o.Queued.Dry, o.Queued.CostN))
	}
	if o.Root, err = harness.RepoRoot(); err != nil {
		fail(err)
	}
	o.WorkDir = underRoot(o.Root, *workDir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	report, err := bench.Run(ctx, o)
	if err != nil {
		fail(err)
	}
	summary, err := report.Summary()
	fmt.Print(summary)
	if err != nil {
		fail(err)
	}
	if len(report.Errors) > 0 {
		fail(fmt.Errorf("%d phase(s) failed; %s left unchanged", len(report.Errors), *out))
	}
	md, err := report.Markdown()
	if err != nil {
		fail(err)
	}
	path := underRoot(o.Root, *out)
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		fail(fmt.Errorf("write the report: %w", err))
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s\n", path)
}

func underRoot(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < time.Second || d > 9*time.Minute {
			return nil, fmt.Errorf("%q is not a wait of 1 s to 9 min", f)
		}
		out = append(out, d)
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
