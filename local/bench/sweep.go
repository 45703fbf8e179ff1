package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/sweepload"
	"github.com/gamefabric-alloc/allocsvc/local/template"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// sweepMaxRuns bounds the phase: 20,000 take 2 runs at the default cap.
const sweepMaxRuns = 10

// SweepRun is one health sweep run of the backlog phase.
type SweepRun struct {
	FirstShard, TakenOn, Reviewed, Marked, Failures, Remaining int
	Took                                                       time.Duration
	PerSecond                                                  float64
	StoppedEarly                                               bool
	// MinShard and MaxShard are the fewest and most reviews one shard got.
	MinShard, MaxShard int
	// Starved counts shards that had due instances before the run and as
	// many after it, counted from the index.
	Starved int
}

// SweepResult is the health sweep draining a backlog of due instances.
type SweepResult struct {
	Instances  int
	RunTimeout time.Duration
	SeedTook   time.Duration
	Runs       []SweepRun
	Took       time.Duration  // the runs' time
	Left       int            // still due after the last run
	States     map[string]int // stored "state/reason" of the seeded instances afterwards
}

// AllMarked: every seeded instance ended Unhealthy, and no run starved a
// shard.
func (r SweepResult) AllMarked() bool {
	unhealthy := r.States["Unhealthy/LinkTimeout"] + r.States["Unhealthy/MissedHeartbeats"]
	return r.Instances > 0 && r.Left == 0 && unhealthy == r.Instances && r.StarvedRuns() == 0
}

// StarvedRuns counts runs that left some shard with due instances untouched.
func (r SweepResult) StarvedRuns() int {
	n := 0
	for _, run := range r.Runs {
		if run.Starved > 0 {
			n++
		}
	}
	return n
}

// MeasureSweep seeds n due instances into a fresh table on a DynamoDB Local
// of its own (no stack running beside it, so no scheduled sweep competes)
// and runs the sweep until nothing is due, each run with the Lambda's
// timeout, as local/sweepload and the 20,000-instance test do.
func MeasureSweep(ctx context.Context, root string, n int, log io.Writer) (SweepResult, error) {
	res := SweepResult{Instances: n, RunTimeout: sweepload.LambdaTimeout}
	ctx, cancel := context.WithTimeout(ctx, sweepMaxRuns*sweepload.LambdaTimeout+2*time.Minute)
	defer cancel()
	ddb, err := harness.StartDynamoDBLocal(ctx)
	if err != nil {
		return res, fmt.Errorf("DynamoDB Local: %w", err)
	}
	defer ddb.Stop()
	tpl, err := template.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return res, err
	}
	tables, err := tpl.Tables()
	if err != nil {
		return res, err
	}
	names := map[string]string{}
	for _, t := range tables {
		names[t.LogicalID] = "bench-sweep-" + t.LogicalID
	}
	db := harness.NewDynamoDB(harness.AWSConfig(), ddb.Endpoint)
	if err := template.CreateTables(ctx, db, tpl, names); err != nil {
		return res, err
	}
	table := names["GameInstancesTable"]
	clock := harness.NewClock(time.Now().UTC())
	svc := &lifecycle.Service{Store: store.NewGameInstances(db, table), Policy: lifecycle.DefaultPolicy, Now: clock.Now}
	ctx = logging.WithLogger(ctx, logging.New(io.Discard, 0))

	progress(log, "health sweep: seeding %d due instances", n)
	began := time.Now()
	ids, err := sweepload.Seed(ctx, db, table, "bench-sweep", n, svc.Policy, clock.Now())
	if err != nil {
		return res, err
	}
	res.SeedTook = time.Since(began)
	progress(log, "health sweep: seeded in %s", res.SeedTook.Round(time.Millisecond))
	drained, err := sweepload.Drain(ctx, svc, clock, res.RunTimeout, sweepMaxRuns, func(r sweepload.Run) {
		s := r.Summary
		res.Runs = append(res.Runs, SweepRun{FirstShard: s.FirstShard, TakenOn: s.Due, Reviewed: s.Reviewed, Marked: s.Marked,
			Failures: s.Failures + s.ShardFailures, Remaining: s.Remaining, Took: r.Took, PerSecond: r.PerSecond(), StoppedEarly: s.StoppedEarly,
			MinShard: slices.Min(s.ReviewedByShard), MaxShard: slices.Max(s.ReviewedByShard), Starved: len(r.Starved())})
		progress(log, "health sweep: run %d reviewed %d in %s (%.0f/s), %d left for later", len(res.Runs), s.Reviewed,
			r.Took.Round(time.Millisecond), r.PerSecond(), s.Remaining)
	})
	res.Took, res.Left = drained.Took, drained.Left
	if err != nil {
		return res, err
	}
	if res.States, err = sweepload.States(ctx, db, table, ids); err != nil {
		return res, err
	}
	if !res.AllMarked() {
		return res, fmt.Errorf("after %d runs: %d still due, stored states %v, %d runs starved a shard", len(res.Runs), res.Left, res.States, res.StarvedRuns())
	}
	return res, nil
}
