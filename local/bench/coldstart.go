package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// Cold-start parameters and time bounds. A start normally takes tens of
// milliseconds; the bounds only stop a hung process or component from
// hanging `make bench`.
const (
	// ColdStartGoalRatio is the goal (issue 25): a first response's
	// median at most 2 × hello-world's.
	ColdStartGoalRatio = 2.0
	// ColdStartInitGoalRatio is the goal for init alone: at most 1.5 ×
	// hello-world's.
	ColdStartInitGoalRatio = 1.5
	// MinStarts is the fewest measured starts a median is taken over.
	MinStarts = 10
	// InitTraceStarts are the starts per series, after the measured ones,
	// run with GODEBUG=inittrace=1 to say where init goes (the trace's own
	// output slows a start, so they are not timed).
	InitTraceStarts = 3

	coldBuildTimeout     = 5 * time.Minute // a cold build cache compiles the AWS SDK
	coldComponentTimeout = time.Minute
	coldMeasureTimeout   = 2 * time.Minute // every measured start together
	coldStartTimeout     = 15 * time.Second
	coldInvokeTimeout    = 10 * time.Second // the function timeout the harness applies
	// coldSettle is a pause before each start, so the previous start's
	// teardown and the work it caused in the components (JVM GC and JIT,
	// moto) do not land in the next sample.
	coldSettle = 25 * time.Millisecond
)

// ColdStartReport holds every function's cold starts next to hello-world's.
type ColdStartReport struct {
	Starts        int     // measured starts per series
	GoalRatio     float64 // ColdStartGoalRatio
	InitGoalRatio float64 // ColdStartInitGoalRatio
	Platform      string  // GOOS/GOARCH the binaries were built for and run on
	// Load is the 1-minute load average before and after the measured
	// starts: on a busy machine every figure, and the ratios, get noisier.
	Load        string
	Hello       ColdStartSeries
	Functions   []FunctionColdStart // template order
	Worst       FunctionColdStart   // the highest First.Ratio
	AllMeetGoal bool                // every function's First series
	// WorstInit has the highest First.InitRatio; AllMeetInitGoal says
	// whether every First series' init meets ColdStartInitGoalRatio.
	WorstInit       FunctionColdStart
	AllMeetInitGoal bool
	// InitRoom is what init may add to hello-world's within the init goal.
	InitRoom time.Duration
}

// FunctionColdStart is one function's measurements.
type FunctionColdStart struct {
	Name string // logical ID
	// First is the figure held to the goal: for HTTP functions an event the
	// handler answers without any AWS or GameFabric call, for scheduled ones
	// the scheduled event (which necessarily makes loopback calls).
	First ColdStartSeries
	// Realistic is a cold start whose first request does the real work
	// against the local components; nil for scheduled functions, whose
	// First already is their real event.
	Realistic *ColdStartSeries
}

// ColdStartSeries is one (binary, first event) pair started Starts times.
type ColdStartSeries struct {
	Event  string // what the first event is, for the report
	Answer string // what every start answered, e.g. "HTTP 400"
	// Total runs from just before process start until the first
	// invocation's response reached the harness; Init is the harness's
	// InitDuration (process start → first /next) of the same starts.
	Total, Init Summary
	Ratio       float64 // Total.P50 / hello-world's
	// InitRatio compares Init.P50 with hello-world's: the start-up cost
	// alone, comparable even when the first event makes real calls.
	InitRatio     float64
	MeetsGoal     bool // Ratio ≤ ColdStartGoalRatio
	MeetsInitGoal bool // InitRatio ≤ ColdStartInitGoalRatio
	// Invoke is the first invocation alone (the harness's duration from
	// handing the event over to the response), part of Total. Warm is the
	// same event sent again to the same process at once, for the series
	// held to the goal (zero for a realistic one): the event's own work
	// once connections are open, code is paged in and caches (a token)
	// are filled. Invoke − Warm is what being cold adds to the first one.
	Invoke, Warm Summary
	// Inits says where the package initialisation within Init goes.
	Inits InitTrace
	// InitOverHello is Init.P50 less hello-world's. InvokeRoom is what the
	// first invocation may take within the first-response goal after this
	// Init.P50 (hello-world's total × the goal − Init.P50): a Warm above it
	// misses the goal by the event's own work, whatever start-up costs.
	InitOverHello, InvokeRoom time.Duration
}

// ColdInvokeExtra is what being cold adds to the first invocation: its
// median less the same event's, warm.
func (s ColdStartSeries) ColdInvokeExtra() time.Duration { return s.Invoke.P50 - s.Warm.P50 }

// ColdStart builds every function of template.yaml and the hello-world
// baseline for this machine with the Lambda build flags, starts DynamoDB
// Local, moto and the emulated GameFabric, and then cold-starts each binary
// o.ColdStarts times (after one discarded warm-up round), round-robin, one
// process at a time.
func ColdStart(ctx context.Context, o Options) (*ColdStartReport, error) {
	if o.ColdStarts < MinStarts {
		return nil, fmt.Errorf("coldstart: at least %d starts make a meaningful median, got %d", MinStarts, o.ColdStarts)
	}
	began := time.Now()
	targets, err := bootstrapTargets(o.Root)
	if err != nil {
		return nil, err
	}
	progress(o.Log, "coldstart: building %d bootstraps for linux/%s with the Lambda build flags", len(targets), runtime.GOARCH)
	buildCtx, cancel := context.WithTimeout(ctx, coldBuildTimeout)
	bins, err := buildBootstraps(buildCtx, o.Root, filepath.Join(o.WorkDir, "coldstart-"+runtime.GOARCH), runtime.GOARCH, targets)
	cancel()
	if err != nil {
		return nil, err
	}

	progress(o.Log, "coldstart: built in %s; starting DynamoDB Local, moto and the emulated GameFabric", time.Since(began).Round(100*time.Millisecond))
	compCtx, cancel := context.WithTimeout(ctx, coldComponentTimeout)
	fx, err := startColdFixture(compCtx, o.Root, o.ColdStarts+1)
	cancel()
	if err != nil {
		return nil, err
	}
	defer fx.close()

	plan, err := planColdStarts(o.Root, targets, bins, fx)
	if err != nil {
		return nil, err
	}
	measureCtx, cancel := context.WithTimeout(ctx, coldMeasureTimeout)
	defer cancel()
	loadBefore := loadAverage(false)
	if err := runColdRounds(measureCtx, plan, o.ColdStarts, o.Log); err != nil {
		return nil, err
	}
	if err := traceInits(measureCtx, plan, InitTraceStarts); err != nil {
		return nil, err
	}
	r := coldStartReportOf(plan, o.ColdStarts)
	r.Load = fmt.Sprintf("%s before, %s after", loadBefore, loadAverage(false))
	return r, nil
}

// runColdRounds starts every series once per round, in plan order, so that
// machine noise spreads evenly. Round 0 warms the page cache and the JVM
// and Python components and is discarded.
func runColdRounds(ctx context.Context, plan []*coldSeries, starts int, log io.Writer) error {
	t0 := time.Now()
	for round := 0; round <= starts; round++ {
		for _, s := range plan {
			select {
			case <-ctx.Done():
				return fmt.Errorf("coldstart: round %d: %w", round, ctx.Err())
			case <-time.After(coldSettle):
			}
			m, err := s.startOnce(ctx, round, nil)
			if err != nil {
				return fmt.Errorf("coldstart: %s (%s), round %d: %w", s.name, s.event, round, err)
			}
			if round > 0 {
				s.totals, s.inits = append(s.totals, m.total), append(s.inits, m.init)
				s.invokes, s.warms = append(s.invokes, m.invoke), append(s.warms, m.warm)
			}
		}
		progress(log, "coldstart: round %d/%d done (round 0 warms up; %s elapsed)", round, starts, time.Since(t0).Round(100*time.Millisecond))
	}
	return nil
}

// coldSample is one start's figures (see ColdStartSeries); logs is the
// function's output, kept only when asked for.
type coldSample struct {
	total, init, invoke, warm time.Duration
	logs                      string
}

// startOnce is one cold start: a fresh process, one invocation (and for a
// series held to the goal the same event once more, warm), then kill.
// extraEnv is added to the series' environment, and then the function's
// output is kept in the sample.
func (s *coldSeries) startOnce(ctx context.Context, round int, extraEnv []string) (coldSample, error) {
	event, err := s.makeEvent(round)
	if err != nil {
		return coldSample{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartTimeout)
	defer cancel()

	var m coldSample
	began := time.Now()
	rt, err := runtimeapi.Start(ctx, s.bin, append(s.env[:len(s.env):len(s.env)], extraEnv...), runtimeapi.WithFunctionName(s.name))
	if err != nil {
		return coldSample{}, err
	}
	res, err := rt.Invoke(ctx, event, coldInvokeTimeout)
	m.total, m.init, m.invoke = time.Since(began), rt.InitDuration(), res.Duration
	if err == nil && !s.realistic {
		var again runtimeapi.Result
		if again, err = rt.Invoke(ctx, event, coldInvokeTimeout); err == nil && again.FunctionError != nil {
			err = fmt.Errorf("the same event again, warm: function error: %w", again.FunctionError)
		}
		m.warm = again.Duration
	}
	closeErr := rt.Close()
	if err != nil {
		return coldSample{}, err
	}
	answer, err := s.check(res)
	if err != nil {
		return coldSample{}, fmt.Errorf("%w\n--- function output (tail) ---\n%s", err, rt.Logs())
	}
	if closeErr != nil {
		return coldSample{}, fmt.Errorf("stopping the function: %w", closeErr)
	}
	if extraEnv != nil {
		m.logs = rt.Logs()
	}
	s.answer = answer
	return m, nil
}

// coldStartReportOf turns the collected samples into the report; plan[0]
// is the baseline.
func coldStartReportOf(plan []*coldSeries, starts int) *ColdStartReport {
	r := &ColdStartReport{Starts: starts, GoalRatio: ColdStartGoalRatio, InitGoalRatio: ColdStartInitGoalRatio,
		Platform: "linux/" + runtime.GOARCH, AllMeetGoal: true, AllMeetInitGoal: true}
	hello := plan[0].stats(nil)
	r.Hello = plan[0].stats(&hello)
	r.InitRoom = time.Duration(float64(hello.Init.P50) * (ColdStartInitGoalRatio - 1))
	index := map[string]int{}
	for _, s := range plan[1:] {
		i, ok := index[s.name]
		if !ok {
			i = len(r.Functions)
			index[s.name] = i
			r.Functions = append(r.Functions, FunctionColdStart{Name: s.name})
		}
		st := s.stats(&hello)
		if s.realistic {
			r.Functions[i].Realistic = &st
		} else {
			r.Functions[i].First = st
		}
	}
	for _, f := range r.Functions {
		if f.First.Ratio >= r.Worst.First.Ratio {
			r.Worst = f
		}
		if f.First.InitRatio >= r.WorstInit.First.InitRatio {
			r.WorstInit = f
		}
		r.AllMeetGoal = r.AllMeetGoal && f.First.MeetsGoal
		r.AllMeetInitGoal = r.AllMeetInitGoal && f.First.MeetsInitGoal
	}
	return r
}

// stats summarises the samples; hello is the baseline's summary, nil while
// computing the baseline itself.
func (s *coldSeries) stats(hello *ColdStartSeries) ColdStartSeries {
	st := ColdStartSeries{Event: s.event, Answer: s.answer, Total: Summarize(s.totals), Init: Summarize(s.inits),
		Invoke: Summarize(s.invokes), Inits: s.trace}
	if !s.realistic {
		st.Warm = Summarize(s.warms)
	}
	if hello != nil {
		st.Ratio, st.InitRatio = durRatio(st.Total.P50, hello.Total.P50), durRatio(st.Init.P50, hello.Init.P50)
		st.InitOverHello = st.Init.P50 - hello.Init.P50
		st.InvokeRoom = time.Duration(float64(hello.Total.P50)*ColdStartGoalRatio) - st.Init.P50
	}
	// False for NaN: a missing baseline never meets them.
	st.MeetsGoal, st.MeetsInitGoal = st.Ratio <= ColdStartGoalRatio, st.InitRatio <= ColdStartInitGoalRatio
	return st
}

// ourModule prefixes this repository's packages in an init trace.
const ourModule = "github.com/gamefabric-alloc/allocsvc/"
