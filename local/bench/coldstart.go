package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness/runtimeapi"
)

// Cold-start parameters.
const (
	// DefaultStarts is used when ColdStartOptions.Starts is 0.
	DefaultStarts = 15
	// MinStarts is the fewest measured starts a median is taken over.
	MinStarts = 10
	// ColdStartGoalRatio is the goal: median ≤ 1.3 × hello-world's.
	ColdStartGoalRatio = 1.3
)

// Time bounds. A start normally takes tens of milliseconds; these only stop
// a hung process or component from hanging `make bench`.
const (
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

// ColdStartOptions says what to build and how often to start it.
type ColdStartOptions struct {
	Root    string    // repo root (template.yaml, functions/, events/)
	WorkDir string    // scratch dir for built binaries; relative paths are under Root
	Starts  int       // measured starts per function and event, >= MinStarts (0 = DefaultStarts)
	Log     io.Writer // progress lines
}

// ColdStartReport holds every measured start.
type ColdStartReport struct {
	Starts    int     // measured starts per series
	GoalRatio float64 // ColdStartGoalRatio
	Platform  string  // GOOS/GOARCH the binaries were built for and run on
	Hello     ColdStartSeries
	Functions []FunctionColdStart // template order
	Took      time.Duration       // the whole ColdStart call, builds included
	// Load is the 1-minute load average before and after the measured
	// starts: on a busy machine every figure, and the ratios, get noisier.
	Load string
}

// FunctionColdStart is one function's measurements.
type FunctionColdStart struct {
	Name      string // logical ID
	Scheduled bool
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
	// Totals run from just before process start until the first
	// invocation's response reached the harness; Inits are the harness's
	// InitDuration (process start → first /next) of the same starts.
	Totals, Inits                     []time.Duration
	Median, P90, Min, Max, InitMedian time.Duration
	Ratio                             float64 // Median / hello-world's Median
	// InitRatio is InitMedian / hello-world's InitMedian: the start-up cost
	// alone, comparable even when the first event makes real calls.
	InitRatio float64
}

// MeetsGoal reports whether the series' median is within goal × hello-world.
func (s ColdStartSeries) MeetsGoal(goal float64) bool { return s.Ratio <= goal }

// AllMeetGoal reports whether every function's First series meets the goal.
func (r *ColdStartReport) AllMeetGoal() bool {
	for _, f := range r.Functions {
		if !f.First.MeetsGoal(r.GoalRatio) {
			return false
		}
	}
	return true
}

// ColdStart builds every function of template.yaml and the hello-world
// baseline for this machine with the Lambda build flags, starts DynamoDB
// Local, moto and the emulated GameFabric, and then cold-starts each binary
// Starts times (after one discarded warm-up round), round-robin, one
// process at a time.
func ColdStart(ctx context.Context, o ColdStartOptions) (*ColdStartReport, error) {
	began := time.Now()
	o, err := o.normalized()
	if err != nil {
		return nil, err
	}
	if err := checkDynamoDBLocal(o.Root); err != nil {
		return nil, err
	}
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
	compStart := time.Now()
	compCtx, cancel := context.WithTimeout(ctx, coldComponentTimeout)
	fx, err := startColdFixture(compCtx, o.Root, o.Starts+1)
	cancel()
	if err != nil {
		return nil, err
	}
	defer fx.close()
	progress(o.Log, "coldstart: components ready in %s", time.Since(compStart).Round(100*time.Millisecond))

	plan, err := planColdStarts(o.Root, targets, bins, fx)
	if err != nil {
		return nil, err
	}
	measureCtx, cancel := context.WithTimeout(ctx, coldMeasureTimeout)
	defer cancel()
	loadBefore := loadAverage(false)
	if err := runColdRounds(measureCtx, plan, o.Starts, o.Log); err != nil {
		return nil, err
	}
	r := coldStartReportOf(plan, o.Starts)
	r.Load = fmt.Sprintf("%s before, %s after", loadBefore, loadAverage(false))
	r.Took = time.Since(began)
	return r, nil
}

func (o ColdStartOptions) normalized() (ColdStartOptions, error) {
	if o.Starts == 0 {
		o.Starts = DefaultStarts
	}
	if o.Starts < MinStarts {
		return o, fmt.Errorf("coldstart: Starts must be at least %d for a meaningful median, got %d", MinStarts, o.Starts)
	}
	root, workDir, err := resolveDirs(o.Root, o.WorkDir)
	if err != nil {
		return o, fmt.Errorf("coldstart: %w", err)
	}
	o.Root, o.WorkDir = root, workDir
	return o, nil
}

// checkDynamoDBLocal fails early, and clearly, when `make deps` has not
// run, instead of after a minute of building.
func checkDynamoDBLocal(root string) error {
	if os.Getenv("DYNAMODB_LOCAL_DIR") != "" {
		return nil // the harness resolves and reports that location itself
	}
	dir := filepath.Join(root, ".cache", "dynamodb-local")
	jars, _ := filepath.Glob(filepath.Join(dir, "package", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(jars) == 0 {
		return fmt.Errorf("coldstart: DynamoDB Local is not installed in %s: run `make deps` first", dir)
	}
	return nil
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
			total, init, err := s.startOnce(ctx, round)
			if err != nil {
				return fmt.Errorf("coldstart: %s (%s), round %d: %w", s.name, s.event, round, err)
			}
			if round > 0 {
				s.totals, s.inits = append(s.totals, total), append(s.inits, init)
			}
		}
		what := "warm-up round"
		if round > 0 {
			what = fmt.Sprintf("round %d/%d", round, starts)
		}
		progress(log, "coldstart: %s done (%d starts, %s elapsed)", what, len(plan), time.Since(t0).Round(100*time.Millisecond))
	}
	return nil
}

// startOnce is one cold start: a fresh process, one invocation, then kill.
func (s *coldSeries) startOnce(ctx context.Context, round int) (total, init time.Duration, err error) {
	event, err := s.makeEvent(round)
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartTimeout)
	defer cancel()

	began := time.Now()
	rt, err := runtimeapi.Start(ctx, s.bin, s.env, runtimeapi.WithFunctionName(s.name))
	if err != nil {
		return 0, 0, err
	}
	res, err := rt.Invoke(ctx, event, coldInvokeTimeout)
	total = time.Since(began)
	init = rt.InitDuration()
	closeErr := rt.Close()
	if err != nil {
		return 0, 0, err
	}
	answer, err := s.check(res)
	if err != nil {
		return 0, 0, fmt.Errorf("%w\n--- function output (tail) ---\n%s", err, csLogTail(rt.Logs(), 4<<10))
	}
	if closeErr != nil {
		return 0, 0, fmt.Errorf("stopping the function: %w", closeErr)
	}
	s.answer = answer
	return total, init, nil
}

func csLogTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// coldStartReportOf turns the collected samples into the report.
func coldStartReportOf(plan []*coldSeries, starts int) *ColdStartReport {
	r := &ColdStartReport{Starts: starts, GoalRatio: ColdStartGoalRatio, Platform: "linux/" + runtime.GOARCH}
	hello := plan[0].stats(nil)
	r.Hello = plan[0].stats(&hello)
	index := map[string]int{}
	for _, s := range plan[1:] {
		i, ok := index[s.name]
		if !ok {
			i = len(r.Functions)
			index[s.name] = i
			r.Functions = append(r.Functions, FunctionColdStart{Name: s.name, Scheduled: s.scheduled})
		}
		f := &r.Functions[i]
		st := s.stats(&hello)
		if s.realistic {
			f.Realistic = &st
		} else {
			f.First = st
		}
	}
	return r
}

// stats summarises the samples; hello is the baseline's summary, nil while
// computing the baseline itself.
func (s *coldSeries) stats(hello *ColdStartSeries) ColdStartSeries {
	st := ColdStartSeries{
		Event: s.event, Answer: s.answer, Totals: s.totals, Inits: s.inits,
		Median: csMedian(s.totals), P90: csPercentile(s.totals, 90),
		Min: csPercentile(s.totals, 0), Max: csPercentile(s.totals, 100),
		InitMedian: csMedian(s.inits),
	}
	if hello != nil {
		st.Ratio, st.InitRatio = durRatio(st.Median, hello.Median), durRatio(st.InitMedian, hello.InitMedian)
	}
	return st
}
