package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// Cold-start goals (issue 25), parameters and time bounds. A start takes
// tens of milliseconds; the bounds only stop a hung process or component.
const (
	ColdStartGoalRatio     = 2.0 // a first response's median ÷ hello-world's
	ColdStartInitGoalRatio = 1.5 // init alone ÷ hello-world's
	MinStarts              = 10  // the fewest measured starts a median is taken over
	// InitTraceStarts more starts per series run with GODEBUG=inittrace=1,
	// untimed: the trace's own output slows a start.
	InitTraceStarts = 3

	coldBuildTimeout     = 5 * time.Minute // a cold build cache compiles the AWS SDK
	coldComponentTimeout = time.Minute
	coldMeasureTimeout   = 2 * time.Minute // every measured start together
	coldStartTimeout     = 15 * time.Second
	coldInvokeTimeout    = 10 * time.Second // the function timeout the harness applies
	// coldSettle pauses before each start, so the previous one's teardown and
	// the work it caused in the components (JIT, GC) miss the next sample.
	coldSettle = 25 * time.Millisecond
)

// ColdStartReport holds every function's cold starts next to hello-world's.
type ColdStartReport struct {
	Starts                       int
	GoalRatio, InitGoalRatio     float64
	Platform, Load               string
	Hello                        ColdStartSeries
	Functions                    []FunctionColdStart // template order
	Worst, WorstInit             FunctionColdStart
	AllMeetGoal, AllMeetInitGoal bool
	InitRoom                     time.Duration
}

// FunctionColdStart is one function's measurements: First is held to the
// goal, Realistic (nil where First is the real event) does the real work.
type FunctionColdStart struct {
	Name      string // logical ID
	First     ColdStartSeries
	Realistic *ColdStartSeries
}

// ColdStartSeries is one (binary, first event) pair started Starts times:
// Total from process start to the first response, Init to the first /next,
// Invoke the first invocation alone, Warm the same event again at once.
type ColdStartSeries struct {
	Event, Answer             string // the first event, what every start answered
	Total, Init               Summary
	Ratio, InitRatio          float64
	MeetsGoal, MeetsInitGoal  bool
	Invoke, Warm              Summary
	Inits                     InitTrace
	InitOverHello, InvokeRoom time.Duration

	name, bin                     string
	env                           []string
	realistic                     bool
	makeEvent                     func(round int) ([]byte, error)
	check                         func(runtimeapi.Result) (string, error)
	totals, inits, invokes, warms []time.Duration
}

// ColdInvokeExtra is what being cold adds to the first invocation.
func (s ColdStartSeries) ColdInvokeExtra() time.Duration { return s.Invoke.P50 - s.Warm.P50 }

// ColdStart builds every function and the hello-world baseline for this
// machine and cold-starts each o.ColdStarts times after a discarded warm-up
// round, round-robin, one process at a time, so noise spreads evenly.
func ColdStart(ctx context.Context, o Options) (*ColdStartReport, error) {
	if o.ColdStarts < MinStarts {
		return nil, fmt.Errorf("coldstart: at least %d starts make a meaningful median, got %d", MinStarts, o.ColdStarts)
	}
	targets, bins, err := buildTargets(ctx, o, "coldstart", "coldstart-"+runtime.GOARCH, runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	progress(o.Log, "coldstart: starting DynamoDB Local, moto and the emulated GameFabric")
	compCtx, cancel := context.WithTimeout(ctx, coldComponentTimeout)
	c, refs, err := startColdFixture(compCtx, o.Root, o.ColdStarts+1)
	cancel()
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	plan, err := planColdStarts(o.Root, targets, bins, c, refs)
	if err != nil {
		return nil, err
	}
	ctx, cancel = context.WithTimeout(ctx, coldMeasureTimeout)
	defer cancel()
	loadBefore := loadAverage(false)
	if err := runColdRounds(ctx, plan, o.ColdStarts, o.Log); err != nil {
		return nil, err
	}
	if err := traceInits(ctx, plan, InitTraceStarts); err != nil {
		return nil, err
	}
	r := coldStartReportOf(plan, o.ColdStarts)
	r.Load = fmt.Sprintf("%s before, %s after", loadBefore, loadAverage(false))
	return r, nil
}

func runColdRounds(ctx context.Context, plan []*ColdStartSeries, starts int, log io.Writer) error {
	t0 := time.Now()
	for round := 0; round <= starts; round++ {
		for _, s := range plan {
			m, err := s.startOnce(ctx, round, nil)
			if err != nil {
				return fmt.Errorf("coldstart: %s (%s), round %d: %w", s.name, s.Event, round, err)
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

type coldSample struct {
	total, init, invoke, warm time.Duration
	logs                      string
}

// startOnce is one cold start: a fresh process, one invocation (again,
// warm, for a series held to the goal), kill. With extraEnv the output is
// kept.
func (s *ColdStartSeries) startOnce(ctx context.Context, round int, extraEnv []string) (coldSample, error) {
	select {
	case <-ctx.Done():
		return coldSample{}, ctx.Err()
	case <-time.After(coldSettle):
	}
	event, err := s.makeEvent(round)
	if err != nil {
		return coldSample{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartTimeout)
	defer cancel()
	began := time.Now()
	rt, err := runtimeapi.Start(ctx, s.bin, append(s.env[:len(s.env):len(s.env)], extraEnv...), runtimeapi.WithFunctionName(s.name))
	if err != nil {
		return coldSample{}, err
	}
	res, err := rt.Invoke(ctx, event, coldInvokeTimeout)
	m := coldSample{total: time.Since(began), init: rt.InitDuration(), invoke: res.Duration}
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
	if s.Answer, err = s.check(res); err != nil {
		return coldSample{}, fmt.Errorf("%w\n--- function output (tail) ---\n%s", err, rt.Logs())
	}
	if closeErr != nil {
		return coldSample{}, fmt.Errorf("stopping the function: %w", closeErr)
	}
	if extraEnv != nil {
		m.logs = rt.Logs()
	}
	return m, nil
}

func coldStartReportOf(plan []*ColdStartSeries, starts int) *ColdStartReport {
	r := &ColdStartReport{Starts: starts, GoalRatio: ColdStartGoalRatio, InitGoalRatio: ColdStartInitGoalRatio,
		Platform: "linux/" + runtime.GOARCH, AllMeetGoal: true, AllMeetInitGoal: true}
	hello := plan[0]
	hello.summarise(nil)
	hello.summarise(hello)
	r.Hello = *hello
	r.InitRoom = time.Duration(float64(hello.Init.P50) * (ColdStartInitGoalRatio - 1))
	for _, s := range plan[1:] {
		if len(r.Functions) == 0 || r.Functions[len(r.Functions)-1].Name != s.name {
			r.Functions = append(r.Functions, FunctionColdStart{Name: s.name})
		}
		s.summarise(hello)
		if f := &r.Functions[len(r.Functions)-1]; s.realistic {
			f.Realistic = s
		} else {
			f.First = *s
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

// summarise fills in the figures against hello, the baseline (nil for it).
func (s *ColdStartSeries) summarise(hello *ColdStartSeries) {
	s.Total, s.Init, s.Invoke = Summarize(s.totals), Summarize(s.inits), Summarize(s.invokes)
	if !s.realistic {
		s.Warm = Summarize(s.warms)
	}
	if hello != nil {
		s.Ratio, s.InitRatio = durRatio(s.Total.P50, hello.Total.P50), durRatio(s.Init.P50, hello.Init.P50)
		s.InitOverHello = s.Init.P50 - hello.Init.P50
		s.InvokeRoom = time.Duration(float64(hello.Total.P50)*ColdStartGoalRatio) - s.Init.P50
	}
	// False for NaN: a missing baseline never meets them.
	s.MeetsGoal, s.MeetsInitGoal = s.Ratio <= ColdStartGoalRatio, s.InitRatio <= ColdStartInitGoalRatio
}

const (
	// SizeGoalMB is the goal for one stripped arm64 bootstrap, in 10^6 bytes.
	SizeGoalMB     = 12
	lambdaGOARCH   = "arm64"
	helloWorldName = "hello-world"
)

// SizeReport lists each function's stripped linux/arm64 bootstrap.
type SizeReport struct {
	GOARCH      string
	GoalMB      float64
	Functions   []BinarySize // template order
	Hello       BinarySize
	Largest     BinarySize
	AllMeetGoal bool
}

// BinarySize is one built bootstrap.
type BinarySize struct {
	Name      string // logical ID, or "hello-world"
	Bytes     int64
	MB        float64 // decimal
	MeetsGoal bool
}

// BinarySizes builds every function and hello-world as make build does.
func BinarySizes(ctx context.Context, o Options) (*SizeReport, error) {
	targets, bins, err := buildTargets(ctx, o, "sizes", filepath.Join("sizes", lambdaGOARCH), lambdaGOARCH)
	if err != nil {
		return nil, err
	}
	r := &SizeReport{GOARCH: lambdaGOARCH, GoalMB: SizeGoalMB, AllMeetGoal: true}
	for _, t := range targets {
		fi, err := os.Stat(bins[t.name])
		if err != nil {
			return nil, fmt.Errorf("sizes: %s: %w", t.name, err)
		}
		b := BinarySize{Name: t.name, Bytes: fi.Size(), MB: float64(fi.Size()) / 1e6}
		b.MeetsGoal = b.MB <= SizeGoalMB
		if t.name == helloWorldName {
			r.Hello = b
			continue
		}
		r.Functions = append(r.Functions, b)
		r.AllMeetGoal = r.AllMeetGoal && b.MeetsGoal
		if b.Bytes >= r.Largest.Bytes {
			r.Largest = b
		}
	}
	return r, nil
}

type bootstrapTarget struct{ name, pkg, dir string }

// buildTargets builds template.yaml's functions in template order, then
// the baseline, for linux/goarch with the Makefile's flags; bins are keyed
// by target name.
func buildTargets(ctx context.Context, o Options, what, sub, goarch string) (targets []bootstrapTarget, bins map[string]string, err error) {
	t, err := stack.LoadTemplate(o.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("reading template.yaml: %w", err)
	}
	ids := t.LogicalIDs(template.TypeServerlessFunction)
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("template.yaml in %s declares no AWS::Serverless::Function", o.Root)
	}
	var pkgs []string
	for _, id := range ids {
		targets = append(targets, bootstrapTarget{name: id, pkg: "functions/" + stack.FunctionDir(id), dir: stack.FunctionDir(id)})
	}
	targets = append(targets, bootstrapTarget{name: helloWorldName, pkg: "local/bench/hello", dir: "hello"})
	for _, t := range targets {
		pkgs = append(pkgs, t.pkg)
	}
	progress(o.Log, "%s: building %d bootstraps for linux/%s (-trimpath -tags lambda.norpc -ldflags='-s -w')", what, len(targets), goarch)
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, coldBuildTimeout)
	defer cancel()
	byDir, err := stack.BuildFor(ctx, o.Root, filepath.Join(o.WorkDir, sub), goarch, pkgs...)
	if err != nil {
		return nil, nil, err
	}
	progress(o.Log, "%s: built in %s", what, time.Since(began).Round(100*time.Millisecond))
	bins = map[string]string{}
	for _, t := range targets {
		bins[t.name] = byDir[t.dir]
	}
	return targets, bins, nil
}
