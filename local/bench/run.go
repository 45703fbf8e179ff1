package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/sweepload"
)

// Options is one `make bench` run (see local/cmd/bench's flags).
type Options struct {
	Root, WorkDir              string // absolute
	Log                        io.Writer
	N                          int
	Delay                      time.Duration
	Pool, BigPool              int
	Throughput                 ThroughputOptions
	RaceInstances, RaceCallers int
	ColdStarts, SweepBacklog   int
	SweepGames                 []int // games in play the sweep's reads are priced at
	Queued                     QueuedOptions
	BenchTime                  string
}

// Report is every figure of one run: the data report.md.tmpl renders.
// A report with Errors is not written over docs/benchmarks.md.
type Report struct {
	Options                   Options
	Const                     Constants
	Machine                   Machine
	LoadAvgEnd                string
	Took                      time.Duration
	ColdStart                 *ColdStartReport
	Sizes                     *SizeReport
	Overhead                  OverheadResult
	AgonesOverhead            OverheadResult // the Agones path's, beside Overhead
	CPUShare                  CPUShareResult
	OwnTime                   OwnTimeResult
	Fallback                  FallbackResult
	Billed                    BilledResult
	Requests                  RequestsResult
	Profile                   ProfileResult
	Lifecycle                 LifecycleResult
	Events                    EventsResult
	Rooms                     RoomsResult
	Queued                    QueuedResult
	Throughput                []ThroughputLevel
	Best                      *ThroughputLevel // the highest rate of any level
	Race                      RaceResult
	Integrity                 []Integrity // one per stack, in the order measured
	DoubleAllocated, Answered int
	Bottleneck                Bottleneck
	Cost                      CostModel
	Sweep                     SweepResult
	SweepReads                SweepReadsResult
	Micro                     MicroResult
	Errors                    []string
}

// Constants are the fixed parameters the report names.
type Constants struct {
	RegionOK, RegionFallback, RegionDown string
	RegionAgones                         string
	OverheadWarmup, ThroughputWarmup     int
	OverheadGoal, OverheadSlack          float64
	FallbackGoal                         time.Duration
	HealthCacheTTLSecs                   int
	CFSPeriod                            time.Duration
	CPUShareGoal, CPUShareTarget         float64
}

// Warm-up before measuring: the first calls of a sandbox, of DynamoDB
// Local's JVM (its JIT) and of the connection pools are not steady state.
const (
	overheadWarmup   = 20  // pairs or triples before the overhead and fallback samples
	throughputWarmup = 300 // allocations at the lowest level before the throughput levels
)

// Run measures everything, one phase after another so that they do not
// compete for the cores.
func Run(ctx context.Context, o Options) (*Report, error) {
	began := time.Now()
	// Fail early, before minutes of cold starts, without DynamoDB Local.
	dir := filepath.Join(o.Root, ".cache", "dynamodb-local")
	if jars, _ := filepath.Glob(filepath.Join(dir, "package", "lib", "dynamodb_local_*", "DynamoDBLocal.jar")); len(jars) == 0 && os.Getenv("DYNAMODB_LOCAL_DIR") == "" {
		return nil, fmt.Errorf("DynamoDB Local is not installed in %s: run `make deps` (or `make bench`, which depends on it)", dir)
	}
	r := &Report{Options: o, Machine: DescribeMachine(ctx, o.Root), Const: Constants{
		RegionOK: RegionOK, RegionFallback: RegionFallback, RegionDown: RegionDown, RegionAgones: RegionAgones,
		OverheadWarmup: overheadWarmup, ThroughputWarmup: throughputWarmup,
		OverheadGoal: OverheadGoal, OverheadSlack: OverheadGoal - 1, FallbackGoal: FallbackGoal, HealthCacheTTLSecs: healthCacheTTLSecs,
		CFSPeriod: cfsPeriodUs * time.Microsecond, CPUShareGoal: CPUShareGoal, CPUShareTarget: CPUShareTarget,
	}}
	// Cold start and sizes first, before our stack loads the machine.
	progress(o.Log, "cold start (this takes a while: every function is started many times)")
	var err error
	r.ColdStart, err = ColdStart(ctx, o)
	r.fail("cold start", err)
	r.Sizes, err = BinarySizes(ctx, o)
	r.fail("binary sizes", err)
	for i, pool := range []int{o.Pool, o.BigPool} {
		if i == 0 || pool > 0 {
			if err := r.measureStack(ctx, pool, i == 0); err != nil {
				return r, err
			}
		}
	}
	// After the stacks, so no other traffic shares DynamoDB Local's cores.
	if o.SweepBacklog > 0 {
		progress(o.Log, "health sweep: %d due instances, runs of %s until none is due", o.SweepBacklog, sweepload.LambdaTimeout)
		r.Sweep, err = MeasureSweep(ctx, o.Root, o.SweepBacklog, o.Log)
		r.fail("health sweep backlog", err)
	}
	if len(o.SweepGames) > 0 {
		progress(o.Log, "health sweep reads: %v games in play, heartbeating", o.SweepGames)
		r.SweepReads, err = MeasureSweepReads(ctx, o.Root, o.SweepGames, o.Log)
		r.fail("health sweep reads", err)
	}
	r.Micro = RunMicroBenchmarks(ctx, o.Root, o.BenchTime, o.Log)
	r.fail("micro-benchmarks", r.Micro.Err)
	r.derive()
	r.LoadAvgEnd = loadAverage(true)
	r.Took = time.Since(began)
	return r, nil
}

func (r *Report) fail(phase string, err error) bool {
	if err != nil {
		progress(r.Options.Log, "%s FAILED: %v", phase, err)
		r.Errors = append(r.Errors, phase+": "+err.Error())
	}
	return err != nil
}

func (r *Report) derive() {
	r.Overhead.FunctionWork, r.Overhead.Hops = r.Billed.Duration.P50-r.Overhead.Direct.P50, r.Overhead.E2E.P50-r.Billed.Duration.P50
	if len(r.Throughput) > 0 {
		best := slices.MaxFunc(r.Throughput, func(a, b ThroughputLevel) int { return cmp.Compare(a.PerSecond, b.PerSecond) })
		r.Best = &best
	}
	r.DoubleAllocated, r.Answered = r.Race.MultipleCreated, 0
	for _, in := range r.Integrity {
		r.DoubleAllocated += in.DoubleAllocated + in.Mismatched
		r.Answered += in.Instances
	}
	r.Bottleneck = AnalyseThroughput(r.Throughput, r.Billed.Duration.P50)
	r.Cost = NewCostModel(costInputs(r.Billed, r.Requests))
	if len(r.Cost.Scenarios) > 0 {
		r.Lifecycle.price(r.Cost.Scenarios[0].Total, r.Events.PerGame, r.SweepReads.USD)
	}
	r.Rooms.price(r.Cost, &r.Lifecycle, r.Events.PerGame)
	r.Queued.price(r.Cost)
}

// measureStack runs the figures that need a stack with its own stand-in,
// so the exactly-once check sees only its calls; a further stack only the
// highest throughput level.
func (r *Report) measureStack(ctx context.Context, pool int, full bool) error {
	o := r.Options
	standIn := StartStandIn(o.Delay)
	defer standIn.Close()
	progress(o.Log, "starting the local stack with %d sandboxes per function (builds the bootstraps, starts DynamoDB Local and moto)", pool)
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	s, err := StartStack(startCtx, o.Root, o.WorkDir, pool, standIn)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		if err := s.Close(); err != nil {
			progress(o.Log, "stopping the stack: %v", err)
		}
	}()
	progress(o.Log, "stack up: API %s, DynamoDB Local %s, log %s", s.APIURL, s.DynamoDB, s.LogPath())
	callers := o.Throughput.Callers
	if full {
		r.measureFull(ctx, s)
	} else if len(callers) > 0 {
		callers = callers[len(callers)-1:]
	}
	created := &sync.Map{}
	if len(callers) > 0 {
		warm := o.Throughput
		warm.PerLevel = throughputWarmup
		progress(o.Log, "throughput warm-up: %d allocations, not measured", warm.PerLevel)
		_, err := MeasureThroughput(ctx, s, callers[0], warm, created, io.Discard)
		r.fail(fmt.Sprintf("throughput warm-up (pool %d)", pool), err)
	}
	for _, c := range callers {
		lvl, err := MeasureThroughput(ctx, s, c, o.Throughput, created, o.Log)
		if !r.fail(fmt.Sprintf("throughput (pool %d, %d callers)", pool, c), err) {
			r.Throughput = append(r.Throughput, lvl)
		}
	}
	if full && o.RaceInstances > 0 {
		r.Race, err = MeasureRace(ctx, s, o.RaceInstances, o.RaceCallers, created, o.Log)
		r.fail("same-instance race", err)
	}
	integrity, err := CheckExactlyOnce(ctx, s, created)
	if r.fail("exactly-once check", err) {
		return nil
	}
	r.Integrity = append(r.Integrity, integrity)
	progress(o.Log, "exactly-once (pool %d): %d instances answered 201, %d given two servers, %d mismatched",
		pool, integrity.Instances, integrity.DoubleAllocated, integrity.Mismatched)
	if !integrity.OK() {
		r.fail(fmt.Sprintf("exactly-once (pool %d)", pool), fmt.Errorf("%v", integrity.Problems))
	}
	return nil
}

// measureFull runs the figures only the first stack measures.
func (r *Report) measureFull(ctx context.Context, s *Stack) {
	o := r.Options
	var err error
	sample := OverheadOptions{N: o.N, Warmup: overheadWarmup, Cap: 90 * time.Second}
	r.Overhead, err = MeasureOverhead(ctx, s, sample, o.Log)
	r.fail("allocate overhead", err)
	r.AgonesOverhead, err = MeasureAgonesOverhead(ctx, s, sample, o.Log)
	r.fail("Agones allocate overhead", err)
	r.CPUShare, err = MeasureCPUShare(ctx, s, OverheadOptions{N: max(o.N/2, 20), Warmup: overheadWarmup, Cap: 60 * time.Second}, o.Log)
	r.fail("Lambda CPU share", err)
	r.OwnTime, err = MeasureOwnTime(ctx, s, o.N, o.Log)
	r.fail("own time beyond the floor", err)
	r.Fallback, err = MeasureFallback(ctx, s, sample, o.Log)
	r.fail("fallback cost", err)
	r.Billed, err = MeasureBilled(ctx, s, o.N, o.Log)
	r.fail("billed duration", err)
	r.Requests, err = MeasureRequests(ctx, s, o.N, o.Log)
	r.fail("DynamoDB requests", err)
	r.Profile, err = MeasureProfile(ctx, s, max(10*o.N, 800), o.WorkDir, o.Log)
	r.fail("CPU profile", err)
	if r.Lifecycle, err = MeasureLifecycle(ctx, s, max(o.N/10, 10), o.Log); !r.fail("link-back calls", err) {
		r.Events, err = MeasureEvents(ctx, s, r.Lifecycle, o.Log)
		r.fail("lifecycle events", err)
	}
	r.Rooms.Latency, err = MeasureRoomLatency(ctx, s, OverheadOptions{N: o.N, Warmup: overheadWarmup, Cap: time.Minute}, o.Log)
	r.fail("room placement latency", err)
	if r.Rooms.Games, err = MeasureRoomGames(ctx, s, max(o.N/10, 8), o.Log); !r.fail("room games", err) {
		r.Rooms.Events, err = MeasureEvents(ctx, s, LifecycleResult{IDPrefix: r.Rooms.Games.IDPrefix, Heartbeats: heartbeatsPerServer}, o.Log)
		r.fail("room games' events", err)
	}
	if q := o.Queued; q.N > 0 {
		r.measureQueued(ctx, s, q)
	}
}

// measureQueued runs the cost cohorts, each on a rig of its own, beside
// the latency run: minutes saved, and a little contention does not move
// seconds or request counts.
func (r *Report) measureQueued(ctx context.Context, s *Stack, o QueuedOptions) {
	progress(r.Options.Log, "queued placements: %d while %s stays dry for %s, beside %d per wait of %v counted in process",
		o.N, RegionQueued, o.Dry, o.CostN, o.Waits)
	var costErr error
	var wg sync.WaitGroup
	wg.Go(func() { r.Queued.Cost, costErr = MeasureQueuedCost(ctx, s, o, r.Options.Log) })
	var err error
	r.Queued.Latency, err = MeasureQueuedLatency(ctx, s, o, r.Options.Log)
	r.fail("queued placement latency", err)
	wg.Wait()
	r.fail("queued placement cost", costErr)
}

func runID() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }
