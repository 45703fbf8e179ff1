package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/sweepload"
	"github.com/gamefabric-alloc/allocsvc/local/template"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// sweepMaxRuns bounds the phase: 20,000 take 2 runs at the default cap.
const sweepMaxRuns = 10

// SweepRun is one health sweep run; Starved counts shards with as many due
// instances after it as before.
type SweepRun struct {
	N, FirstShard, TakenOn, Reviewed, Failures, Remaining int
	Took                                                  time.Duration
	PerSecond                                             float64
	StoppedEarly                                          bool
	MinShard, MaxShard, Starved                           int
}

// SweepResult is the health sweep draining a backlog of due instances. A
// run takes on at most Limit and dispatches for Dispatch, so below Floor
// reviews/s time, not the cap, ends it.
type SweepResult struct {
	Instances, Linked, LinkedEvery int
	RunTimeout, SeedTook           time.Duration
	Runs                           []SweepRun
	Took                           time.Duration // the runs' time
	Left                           int
	States                         Counts
	PerSecond, MinRate, MaxRate    float64
	StarvedRuns                    int
	StoppedEarly, AllMarked        bool
	Limit, Workers                 int
	MinMargin, Dispatch            time.Duration
	Floor                          float64
}

func (r *SweepResult) summarise() {
	r.StarvedRuns, r.StoppedEarly, r.MinRate, r.MaxRate = 0, false, 0, 0
	for i, run := range r.Runs {
		if run.Starved > 0 {
			r.StarvedRuns++
		}
		r.StoppedEarly = r.StoppedEarly || run.StoppedEarly
		if i == 0 || run.PerSecond < r.MinRate {
			r.MinRate = run.PerSecond
		}
		r.MaxRate = max(r.MaxRate, run.PerSecond)
	}
	if r.Took > 0 {
		r.PerSecond = float64(r.Instances) / r.Took.Seconds()
	}
	unhealthy := r.States["Unhealthy/LinkTimeout"] + r.States["Unhealthy/MissedHeartbeats"]
	r.AllMarked = r.Instances > 0 && r.Left == 0 && unhealthy == r.Instances && r.StarvedRuns == 0
}

// MeasureSweep seeds n due instances on a DynamoDB Local of its own (no
// scheduled sweep competes) and runs the sweep, with the Lambda's timeout,
// until nothing is due, as local/sweepload and the 20,000-instance test do.
func MeasureSweep(ctx context.Context, root string, n int, log io.Writer) (SweepResult, error) {
	dispatch := sweepload.LambdaTimeout - max(lifecycle.SweepMinMargin, sweepload.LambdaTimeout/10)
	res := SweepResult{Instances: n, Linked: n / sweepload.LinkedEvery, LinkedEvery: sweepload.LinkedEvery, RunTimeout: sweepload.LambdaTimeout,
		Limit: lifecycle.SweepLimit, Workers: lifecycle.SweepWorkers, MinMargin: lifecycle.SweepMinMargin,
		Dispatch: dispatch, Floor: float64(lifecycle.SweepLimit) / dispatch.Seconds()}
	ctx, cancel := context.WithTimeout(ctx, sweepMaxRuns*sweepload.LambdaTimeout+2*time.Minute)
	defer cancel()
	ddb, db, tables, err := ownDynamoDB(ctx, root)
	if err != nil {
		return res, err
	}
	defer ddb.Stop()
	names, err := tables("bench-sweep-")
	if err != nil {
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
		res.Runs = append(res.Runs, SweepRun{N: len(res.Runs) + 1, FirstShard: s.FirstShard, TakenOn: s.Due, Reviewed: s.Reviewed,
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
	if res.summarise(); !res.AllMarked {
		return res, fmt.Errorf("after %d runs: %d still due, stored states %v, %d runs starved a shard", len(res.Runs), res.Left, res.States, res.StarvedRuns)
	}
	return res, nil
}

// ownDynamoDB starts a DynamoDB Local of a phase's own (no stack or
// scheduled sweep competes); tables creates template.yaml's tables on it,
// each named prefix+logical ID, and returns their names by logical ID.
func ownDynamoDB(ctx context.Context, root string) (*harness.Process, *dynamodb.Client, func(prefix string) (map[string]string, error), error) {
	tpl, err := template.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, nil, nil, err
	}
	ddb, err := harness.StartDynamoDBLocal(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("DynamoDB Local: %w", err)
	}
	db := harness.NewDynamoDB(harness.AWSConfig(), ddb.Endpoint)
	return ddb, db, func(prefix string) (map[string]string, error) {
		tables, err := tpl.Tables()
		if err != nil {
			return nil, err
		}
		names := map[string]string{}
		for _, t := range tables {
			names[t.LogicalID] = prefix + t.LogicalID
		}
		return names, template.CreateTables(ctx, db, tpl, names)
	}, nil
}
