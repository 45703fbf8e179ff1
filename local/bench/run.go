package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/sweepload"
)

// Options is one `make bench` run.
type Options struct {
	Root, WorkDir string        // absolute
	Log           io.Writer     // progress lines
	N             int           // samples for overhead, fallback, billed duration and request counts
	Delay         time.Duration // the stand-in's fixed allocate delay
	Pool          int           // sandboxes per function, as local/dev.yaml (4)
	BigPool       int           // a second stack with this many sandboxes for the throughput check; 0 skips it
	Throughput    ThroughputOptions
	RaceInstances int // game instances each requested by RaceCallers callers at once
	RaceCallers   int
	ColdStarts    int // starts per cold-start series, at least MinStarts
	SweepBacklog  int // due instances the health sweep phase drains (0 skips it)
	Queued        QueuedOptions
	BenchTime     string // -benchtime of the Go micro-benchmarks
}

// Report is every figure of one run: the data report.md.tmpl renders.
type Report struct {
	Options    Options
	Const      Constants
	Machine    Machine
	LoadAvgEnd string
	Took       time.Duration
	ColdStart  *ColdStartReport
	Sizes      *SizeReport
	Overhead   OverheadResult
	CPUShare   CPUShareResult
	Fallback   FallbackResult
	Billed     BilledResult
	Requests   RequestsResult
	Profile    ProfileResult
	Lifecycle  LifecycleResult
	Events     EventsResult
	Rooms      RoomsResult
	Queued     QueuedResult
	Throughput []ThroughputLevel
	Best       *ThroughputLevel // the highest rate of any level
	Race       RaceResult
	Integrity  []Integrity // one per stack, in the order measured
	// DoubleAllocated counts game instances given two servers (or whose 201
	// matched no single upstream allocation) over every check, of Answered.
	DoubleAllocated, Answered int
	Bottleneck                Bottleneck
	Cost                      CostModel
	Sweep                     SweepResult
	Micro                     MicroResult
	// Errors lists phases that failed; a report with errors is not written
	// over docs/benchmarks.md.
	Errors []string
}

// Constants are the fixed parameters the report names.
type Constants struct {
	RegionOK, RegionFallback, RegionDown string
	OverheadWarmup, ThroughputWarmup     int
	OverheadGoal, OverheadSlack          float64 // the goal, and its margin over 1×
	FallbackGoal                         time.Duration
	HealthCacheTTLSecs                   int
	CFSPeriod                            time.Duration // the CPU-share quota's period
	CPUShareGoal, CPUShareTarget         float64
}

// Run measures everything, one phase after another so that phases do not
// compete for the machine's cores.
func Run(ctx context.Context, o Options) (*Report, error) {
	began := time.Now()
	if err := requireDynamoDBLocal(o.Root); err != nil {
		return nil, err
	}
	r := &Report{Options: o, Machine: DescribeMachine(ctx, o.Root), Const: Constants{
		RegionOK: RegionOK, RegionFallback: RegionFallback, RegionDown: RegionDown,
		OverheadWarmup: overheadWarmup, ThroughputWarmup: throughputWarmup,
		OverheadGoal: OverheadGoal, OverheadSlack: OverheadGoal - 1, FallbackGoal: FallbackGoal, HealthCacheTTLSecs: healthCacheTTLSecs,
		CFSPeriod: cfsPeriodUs * time.Microsecond, CPUShareGoal: CPUShareGoal, CPUShareTarget: CPUShareTarget,
	}}
	fail := func(phase string, err error) {
		progress(o.Log, "%s FAILED: %v", phase, err)
		r.Errors = append(r.Errors, phase+": "+err.Error())
	}

	// Cold start and sizes first, on a machine not yet busy with our stack.
	progress(o.Log, "cold start (this takes a while: every function is started many times)")
	var err error
	if r.ColdStart, err = ColdStart(ctx, o); err != nil {
		fail("cold start", err)
	}
	if r.Sizes, err = BinarySizes(ctx, o); err != nil {
		fail("binary sizes", err)
	}

	if err := r.measureStack(ctx, o.Pool, true, fail); err != nil {
		return r, err
	}
	if o.BigPool > 0 {
		if err := r.measureStack(ctx, o.BigPool, false, fail); err != nil {
			return r, err
		}
	}

	// After the stacks, so that no scheduled sweep and no allocation
	// traffic shares DynamoDB Local's cores with it.
	if o.SweepBacklog > 0 {
		progress(o.Log, "health sweep: %d due instances, runs of %s until none is due", o.SweepBacklog, sweepload.LambdaTimeout)
		if r.Sweep, err = MeasureSweep(ctx, o.Root, o.SweepBacklog, o.Log); err != nil {
			fail("health sweep backlog", err)
		}
	}

	r.Micro = RunMicroBenchmarks(ctx, o.Root, o.BenchTime, o.Log)
	if r.Micro.Err != nil {
		fail("micro-benchmarks", r.Micro.Err)
	}
	r.derive()
	r.LoadAvgEnd = loadAverage(true)
	r.Took = time.Since(began)
	return r, nil
}

// derive computes the figures that combine several phases.
func (r *Report) derive() {
	r.Overhead.split(r.Billed)
	r.Best = bestLevel(r.Throughput)
	r.DoubleAllocated, r.Answered = doubleAllocated(r.Race, r.Integrity)
	r.Bottleneck = AnalyseThroughput(r.Throughput, r.Billed.Duration.P50)
	r.Cost = NewCostModel(costInputs(r.Billed, r.Requests))
	if len(r.Cost.Scenarios) > 0 {
		r.Lifecycle.price(r.Cost.Scenarios[0].Total, r.Events.PerGame)
	}
	r.Rooms.price(r.Cost, &r.Lifecycle, r.Events.PerGame)
	r.Queued.price(r.Cost)
}

// Warm-up before measuring: the first calls of a sandbox, of DynamoDB
// Local's JVM (its JIT) and of the connection pools are not steady state.
const (
	overheadWarmup   = 20  // pairs or triples before the overhead and fallback samples
	throughputWarmup = 300 // allocations at the lowest level before the throughput levels
)

// measureStack runs the figures that need a stack, against its own
// stand-in so that the exactly-once check sees only this stack's calls. The
// first (full) stack measures everything; further ones only throughput at
// the highest level.
func (r *Report) measureStack(ctx context.Context, pool int, full bool, fail func(string, error)) error {
	o := r.Options
	standIn := StartStandIn(o.Delay)
	defer standIn.Close()
	progress(o.Log, "starting the local stack with %d sandboxes per function (builds the bootstraps, starts DynamoDB Local and moto)", pool)
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	s, err := StartStack(startCtx, StackOptions{Root: o.Root, WorkDir: o.WorkDir, PoolSize: pool, StandIn: standIn})
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
		r.measureFull(ctx, s, fail)
	} else if len(callers) > 0 {
		callers = callers[len(callers)-1:]
	}
	created := &sync.Map{}
	if len(callers) > 0 {
		warm := o.Throughput
		warm.PerLevel = throughputWarmup
		progress(o.Log, "throughput warm-up: %d allocations, not measured", warm.PerLevel)
		if _, err := MeasureThroughput(ctx, s, callers[0], warm, created, io.Discard); err != nil {
			fail(fmt.Sprintf("throughput warm-up (pool %d)", pool), err)
		}
	}
	for _, c := range callers {
		lvl, err := MeasureThroughput(ctx, s, c, o.Throughput, created, o.Log)
		if err != nil {
			fail(fmt.Sprintf("throughput (pool %d, %d callers)", pool, c), err)
			continue
		}
		r.Throughput = append(r.Throughput, lvl)
	}
	if full && o.RaceInstances > 0 {
		if r.Race, err = MeasureRace(ctx, s, o.RaceInstances, o.RaceCallers, created, o.Log); err != nil {
			fail("same-instance race", err)
		}
	}
	integrity, err := CheckExactlyOnce(ctx, s, created)
	if err != nil {
		fail("exactly-once check", err)
		return nil
	}
	r.Integrity = append(r.Integrity, integrity)
	progress(o.Log, "exactly-once (pool %d): %d instances answered 201, %d given two servers, %d mismatched",
		pool, integrity.Instances, integrity.DoubleAllocated, integrity.Mismatched)
	if !integrity.OK() {
		fail(fmt.Sprintf("exactly-once (pool %d)", pool), errors.New(fmt.Sprint(integrity.Problems)))
	}
	return nil
}

// measureFull runs the figures only the first stack measures, before
// its throughput levels.
func (r *Report) measureFull(ctx context.Context, s *Stack, fail func(string, error)) {
	o := r.Options
	var err error
	sample := OverheadOptions{N: o.N, Warmup: overheadWarmup, Cap: 90 * time.Second}
	if r.Overhead, err = MeasureOverhead(ctx, s, sample, o.Log); err != nil {
		fail("allocate overhead", err)
	}
	share := OverheadOptions{N: max(o.N/2, 20), Warmup: overheadWarmup, Cap: 60 * time.Second}
	if r.CPUShare, err = MeasureCPUShare(ctx, s, share, o.Log); err != nil {
		fail("Lambda CPU share", err)
	}
	if r.Fallback, err = MeasureFallback(ctx, s, sample, o.Log); err != nil {
		fail("fallback cost", err)
	}
	if r.Billed, err = MeasureBilled(ctx, s, o.N, o.Log); err != nil {
		fail("billed duration", err)
	}
	if r.Requests, err = MeasureRequests(ctx, s, o.N, o.Log); err != nil {
		fail("DynamoDB requests", err)
	}
	if r.Profile, err = MeasureProfile(ctx, s, max(10*o.N, 800), o.WorkDir, o.Log); err != nil {
		fail("CPU profile", err)
	}
	if r.Lifecycle, err = MeasureLifecycle(ctx, s, max(o.N/10, 10), o.Log); err != nil {
		fail("link-back calls", err)
	} else if r.Events, err = MeasureEvents(ctx, s, r.Lifecycle, o.Log); err != nil {
		fail("lifecycle events", err)
	}
	r.measureRooms(ctx, s, fail)
	r.measureQueued(ctx, s, fail)
}

// measureRooms runs issue 22's figures on the full stack, before the
// throughput levels: its game servers close their rooms when done, so
// every later allocation goes to the Allocator again.
func (r *Report) measureRooms(ctx context.Context, s *Stack, fail func(string, error)) {
	o := r.Options
	var err error
	sample := OverheadOptions{N: o.N, Warmup: overheadWarmup, Cap: time.Minute}
	if r.Rooms.Latency, err = MeasureRoomLatency(ctx, s, sample, o.Log); err != nil {
		fail("room placement latency", err)
	}
	if r.Rooms.Games, err = MeasureRoomGames(ctx, s, max(o.N/10, 8), o.Log); err != nil {
		fail("room games", err)
	} else if r.Rooms.Events, err = MeasureEvents(ctx, s, LifecycleResult{IDPrefix: r.Rooms.Games.IDPrefix, Heartbeats: heartbeatsPerServer}, o.Log); err != nil {
		fail("room games' events", err)
	}
}

// measureQueued runs issue 23's figures on the full stack: the cost
// cohorts, each on a rig of its own (its own stand-in, queue and event
// source), beside the latency run on the stack. They share DynamoDB Local,
// moto and the cores only, and keep make bench to a few minutes: the
// figures are seconds and request counts, which a few milliseconds of
// contention do not move.
func (r *Report) measureQueued(ctx context.Context, s *Stack, fail func(string, error)) {
	o := r.Options.Queued
	if o.N == 0 {
		return
	}
	progress(r.Options.Log, "queued placements: %d while %s stays dry for %s, beside %d per wait of %v counted in process",
		o.N, RegionQueued, o.Dry, o.CostN, o.Waits)
	var costErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.Queued.Cost, costErr = MeasureQueuedCost(ctx, s, o, r.Options.Log)
	}()
	var err error
	if r.Queued.Latency, err = MeasureQueuedLatency(ctx, s, o, r.Options.Log); err != nil {
		fail("queued placement latency", err)
	}
	wg.Wait()
	if costErr != nil {
		fail("queued placement cost", costErr)
	}
}

// requireDynamoDBLocal fails early, before minutes of cold starts, when
// `make deps` has not installed DynamoDB Local.
func requireDynamoDBLocal(root string) error {
	if dir := os.Getenv("DYNAMODB_LOCAL_DIR"); dir != "" {
		return nil // the harness checks that location and names it in its error
	}
	jars, _ := filepath.Glob(filepath.Join(root, ".cache", "dynamodb-local", "package", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(jars) == 0 {
		return fmt.Errorf("DynamoDB Local is not installed in %s: run `make deps` (or `make bench`, which depends on it)",
			filepath.Join(root, ".cache", "dynamodb-local"))
	}
	return nil
}

// runID is what a phase's game instance ids start with, so that no two
// runs on the same tables share one: the time, base 36.
func runID() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }
