package bench

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/sweepload"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// SweepReadsGoal is issue 35's bar for the health sweep's own reads, USD
// per 1M typicalGame games; sweepEvery is HealthSweepSchedule's default.
const (
	SweepReadsGoal = 1.0
	sweepEvery     = time.Minute
)

// SweepReadsResult is the health sweep's reads per game with several
// numbers of games in play.
type SweepReadsResult struct {
	At   []SweepReadsAt
	Goal float64
	// USD is the dearest warm figure, what a game's whole life adds; Met,
	// that every warm figure is under Goal.
	USD float64
	Met bool
}

// SweepReadsAt is one number of games in play: a cold run, then two warm
// ones a minute apart, the servers heartbeating in between.
type SweepReadsAt struct {
	Games                int
	SeedTook             time.Duration
	Runs                 []SweepReadRun // cold, warm, warm
	RunsPerGame          float64        // runs that list a typicalGame game
	ListRRU, ReadRRU     float64        // per game per warm run: listing, reading
	ColdReads, WarmReads float64        // records read per game per run
	WarmUSD, ColdUSD     float64        // per 1M typicalGame games
	Met                  bool
}

// SweepReadRun is one run's requests and units, as the counting client saw
// them, and its time: wall clock and this process's CPU.
type SweepReadRun struct {
	Listed, Checked, Marked   int
	Queries, QueryRRU         float64
	Batches, BatchRRU         float64
	Took, CPU                 time.Duration
	StoppedEarly, CapacityOff bool
}

// MeasureSweepReads prices the sweep's reads with each of games in play,
// on a DynamoDB Local of its own: the games are Linked, heartbeating every
// HEALTH_PERIOD (their records rewritten between runs, not counted), and
// the sweep runs as HealthSweepFunction does, its DynamoDB client counting.
func MeasureSweepReads(ctx context.Context, root string, games []int, log io.Writer) (SweepReadsResult, error) {
	res := SweepReadsResult{Goal: SweepReadsGoal}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	ddb, db, tables, err := ownDynamoDB(ctx, root)
	if err != nil {
		return res, err
	}
	defer ddb.Stop()
	counter := NewSDKCounter()
	counted := dynamodb.NewFromConfig(harness.AWSConfig(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(ddb.Endpoint)
		o.APIOptions = append(o.APIOptions, counter.APIOptions("DynamoDB")...)
	})
	ctx = logging.WithLogger(ctx, logging.New(io.Discard, 0))
	for _, n := range games {
		names, err := tables(fmt.Sprintf("bench-live-%d-", n))
		if err != nil {
			return res, err
		}
		at, err := measureSweepReadsAt(ctx, db, counted, counter, names["GameInstancesTable"], n, log)
		if err != nil {
			return res, fmt.Errorf("%d games in play: %w", n, err)
		}
		res.At = append(res.At, at)
		res.USD = max(res.USD, at.WarmUSD)
		res.Met = len(res.At) == 1 && at.Met || res.Met && at.Met
	}
	return res, nil
}

func measureSweepReadsAt(ctx context.Context, db, counted *dynamodb.Client, counter *SDKCounter, table string, n int, log io.Writer) (SweepReadsAt, error) {
	p := lifecycle.DefaultPolicy
	at := SweepReadsAt{Games: n}
	t0 := time.Now().UTC().Truncate(time.Minute)
	linkedAt := t0.Add(-10 * time.Minute)
	began := time.Now()
	if _, err := sweepload.SeedLive(ctx, db, table, "live", n, p, linkedAt, t0); err != nil {
		return at, err
	}
	at.SeedTook = time.Since(began)
	clock := harness.NewClock(t0)
	svc := &lifecycle.Service{Store: store.NewGameInstances(counted, table), Policy: p, Now: clock.Now}
	for i := range 3 {
		if i == 1 { // the heartbeats of the next two minutes
			if _, err := sweepload.SeedLive(ctx, db, table, "live", n, p, linkedAt, t0.Add(2*sweepEvery)); err != nil {
				return at, err
			}
		}
		clock.Set(t0.Add(time.Duration(i) * sweepEvery))
		run, err := countedSweep(ctx, svc, counter)
		if err != nil {
			return at, err
		}
		if run.Marked != 0 || run.Listed != n || run.StoppedEarly {
			return at, fmt.Errorf("run %d: listed %d, marked %d, stopped early %v: want every live game listed and none marked", i+1, run.Listed, run.Marked, run.StoppedEarly)
		}
		at.Runs = append(at.Runs, run)
		progress(log, "sweep reads, %d games in play: run %d listed %d, read %d, %.1f RRU in %d queries and %.1f in %d batch reads, %s (CPU %s)",
			n, i+1, run.Listed, run.Checked, run.QueryRRU, int(run.Queries), run.BatchRRU, int(run.Batches), run.Took.Round(time.Millisecond), run.CPU.Round(time.Millisecond))
	}
	at.price(p)
	return at, nil
}

// countedSweep is one run under the function's timeout, counted.
func countedSweep(ctx context.Context, svc *lifecycle.Service, counter *SDKCounter) (SweepReadRun, error) {
	counter.Take()
	ctx, cancel := context.WithTimeout(ctx, sweepload.LambdaTimeout)
	defer cancel()
	cpu0, began := processCPU(), time.Now()
	sum, err := svc.Sweep(ctx)
	run := SweepReadRun{Took: time.Since(began), CPU: processCPU() - cpu0, Listed: sum.Listed, Checked: sum.Checked, Marked: sum.Marked, StoppedEarly: sum.StoppedEarly}
	for k, op := range counter.Take() {
		switch k.Operation {
		case "Query":
			run.Queries, run.QueryRRU = run.Queries+float64(op.Calls), run.QueryRRU+max(op.TableUnits+op.IndexUnits, queryMinRRU*float64(op.Calls))
		case "BatchGetItem":
			run.Batches, run.BatchRRU = run.Batches+float64(op.Calls), run.BatchRRU+op.TableUnits
		default:
			continue
		}
		run.CapacityOff = run.CapacityOff || !op.CapacityReturned
	}
	if run.CapacityOff {
		return run, fmt.Errorf("DynamoDB Local returned no consumed capacity for the sweep's reads")
	}
	return run, err
}

// price: a game is listed from its key (link + the first heartbeat
// deadline) until it ends, once a run; the warm runs' mean is the steady
// state (a game read every other run), the cold run a sweep that is cold
// every run.
func (at *SweepReadsAt) price(p lifecycle.Policy) {
	n := float64(max(at.Games, 1))
	listed := typicalGame - linkAfter - p.InitialDelay - p.Period*time.Duration(p.FailureThreshold)
	at.RunsPerGame = listed.Minutes() / sweepEvery.Minutes()
	cold, w1, w2 := at.Runs[0], at.Runs[1], at.Runs[2]
	at.ListRRU, at.ReadRRU = (w1.QueryRRU+w2.QueryRRU)/2/n, (w1.BatchRRU+w2.BatchRRU)/2/n
	at.ColdReads, at.WarmReads = float64(cold.Checked)/n, float64(w1.Checked+w2.Checked)/2/n
	at.WarmUSD = at.RunsPerGame * (at.ListRRU + at.ReadRRU) * prices.DynamoRRU
	at.ColdUSD = at.RunsPerGame * (cold.QueryRRU + cold.BatchRRU) / n * prices.DynamoRRU
	at.Met = at.WarmUSD < SweepReadsGoal
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
