//go:build integration

package tests

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/sweepload"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// 20,000 due instances (4 in 5 never linked, 1 in 5 stopped heartbeating)
// are all marked Unhealthy within a bounded number of runs, no run leaves a
// shard with due instances untouched, and no run reaches its deadline.
//
// Each run gets 20 s, not the Lambda's 60 s: that keeps the test near a
// minute and makes the first runs stop at their deadline (20 s − 5 s
// margin), so the stop is exercised against a real DynamoDB too. `make
// bench` measures the same with the Lambda's 60 s (docs/benchmarks.md).
func TestHealthSweepDrains20000DueInstances(t *testing.T) {
	const (
		n          = 20000
		runTimeout = 20 * time.Second
		// A run has 15 s to dispatch. This machine reviews 280–860 a
		// second (3 runs); 8 runs hold as long as a run reviews 2,500
		// (170/s), so a slower CI machine still passes and a sweep that
		// starves shards or stalls does not.
		maxRuns = 8
	)
	t0 := time.Now().UTC()
	clk := harness.NewClock(t0)
	table := newTable(t)
	svc := &lifecycle.Service{Store: store.NewGameInstances(stack.ddb, table), Policy: lifecycle.DefaultPolicy, Now: clk.Now}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctx = logging.WithLogger(ctx, logging.New(io.Discard, 0)) // 20,000 "marked Unhealthy" lines

	began := time.Now()
	ids, err := sweepload.Seed(ctx, stack.ddb, table, "sweep", n, svc.Policy, t0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d due instances in %s", len(ids), time.Since(began).Round(time.Millisecond))

	res, err := sweepload.Drain(ctx, svc, clk, runTimeout, maxRuns, nil)
	marked, failures := 0, 0
	for i, r := range res.Runs {
		s := r.Summary
		t.Logf("run %d: first shard %02d, took on %d, reviewed %d in %s (%.0f/s), marked %d, remaining %d, stopped early %v, failures %d; reviewed by shard %v",
			i+1, s.FirstShard, s.Due, s.Reviewed, r.Took.Round(time.Millisecond), r.PerSecond(), s.Marked, s.Remaining, s.StoppedEarly, s.Failures, s.ReviewedByShard)
		marked, failures = marked+s.Marked, failures+s.Failures
		if starved := r.Starved(); len(starved) > 0 {
			t.Errorf("run %d: shards %v had due instances and none fewer after it (before %v, after %v)", i+1, starved, r.DueBefore, r.DueAfter)
		}
		// Each shard with due instances gets at least half of an even
		// share of the run's reviews (or all it had).
		for sh, before := range r.DueBefore {
			if want := min(before, s.Reviewed/len(r.DueBefore)/2); s.ReviewedByShard[sh] < want {
				t.Errorf("run %d: shard %02d reviewed %d of its %d due, want at least %d", i+1, sh, s.ReviewedByShard[sh], before, want)
			}
		}
		// In-flight reviews end halfway through the margin at the latest.
		if limit := runTimeout - 5*time.Second/2; r.Took > limit {
			t.Errorf("run %d took %s, past %s", i+1, r.Took, limit)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs, %s of sweeping, %.0f instances/s overall", len(res.Runs), res.Took.Round(time.Millisecond), float64(n)/res.Took.Seconds())
	if res.Left != 0 {
		t.Fatalf("%d still due after %d runs", res.Left, len(res.Runs))
	}
	if marked != n || failures != 0 {
		t.Errorf("the runs marked %d with %d failures, want %d and none", marked, failures, n)
	}
	states, err := sweepload.States(ctx, stack.ddb, table, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"Unhealthy/LinkTimeout": n - n/sweepload.LinkedEvery, "Unhealthy/MissedHeartbeats": n / sweepload.LinkedEvery}
	if len(states) != len(want) || states["Unhealthy/LinkTimeout"] != want["Unhealthy/LinkTimeout"] || states["Unhealthy/MissedHeartbeats"] != want["Unhealthy/MissedHeartbeats"] {
		t.Fatalf("stored states %v, want %v", states, want)
	}
}
