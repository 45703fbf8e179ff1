package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/harness/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
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
// Local, moto and the GameFabric emulator, and then cold-starts each binary
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

	csLogf(o.Log, "coldstart: building %d bootstraps for linux/%s with the Lambda build flags", len(targets), runtime.GOARCH)
	buildCtx, cancel := context.WithTimeout(ctx, coldBuildTimeout)
	bins, err := buildBootstraps(buildCtx, o.Root, filepath.Join(o.WorkDir, "coldstart-"+runtime.GOARCH), runtime.GOARCH, targets)
	cancel()
	if err != nil {
		return nil, err
	}

	csLogf(o.Log, "coldstart: built in %s; starting DynamoDB Local, moto and the GameFabric emulator", time.Since(began).Round(100*time.Millisecond))
	compStart := time.Now()
	compCtx, cancel := context.WithTimeout(ctx, coldComponentTimeout)
	fx, err := startColdFixture(compCtx, o.Root, o.Starts+1)
	cancel()
	if err != nil {
		return nil, err
	}
	defer fx.close()
	csLogf(o.Log, "coldstart: components ready in %s", time.Since(compStart).Round(100*time.Millisecond))

	plan, err := planColdStarts(o.Root, targets, bins, fx)
	if err != nil {
		return nil, err
	}
	measureCtx, cancel := context.WithTimeout(ctx, coldMeasureTimeout)
	defer cancel()
	loadBefore := loadAverage()
	if err := runColdRounds(measureCtx, plan, o.Starts, o.Log); err != nil {
		return nil, err
	}
	r := coldStartReportOf(plan, o.Starts)
	r.Load = fmt.Sprintf("%s before, %s after", loadBefore, loadAverage())
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
		csLogf(log, "coldstart: %s done (%d starts, %s elapsed)", what, len(plan), time.Since(t0).Round(100*time.Millisecond))
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

// loadAverage is the 1-minute load average, or "unknown" off Linux.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
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
		st.Ratio, st.InitRatio = csRatio(st.Median, hello.Median), csRatio(st.InitMedian, hello.InitMedian)
	}
	return st
}

// The fixture: real local components every function's environment points at.

// coldBackendAddress is BackendAddress for the functions: Allocate only forwards
// it to the game server in the payload, and nothing here dials it.
const coldBackendAddress = "http://127.0.0.1:3000"

type coldFixture struct {
	c    *stack.Components
	cfg  stack.Config
	refs map[string]string
}

// startColdFixture starts DynamoDB Local (tables from template.yaml), moto with
// the allocator token secret and the GameFabric emulator, the way the local
// stack does, and registers one game server per Allocate start to come.
func startColdFixture(ctx context.Context, root string, servers int) (*coldFixture, error) {
	cfg := stack.Defaults()
	cfg.GameFabric.Port = 0 // any free port: never collide with a running `make dev`
	c, err := stack.StartComponents(ctx, cfg, root)
	if err != nil {
		return nil, fmt.Errorf("coldstart: starting local components: %w", err)
	}
	fx := &coldFixture{c: c, cfg: cfg, refs: c.Refs(cfg, coldBackendAddress)}
	if err := fx.registerServers(ctx, servers); err != nil {
		_ = c.Close()
		return nil, err
	}
	return fx, nil
}

func (fx *coldFixture) close() { _ = fx.c.Close() }

// registerServers registers n game servers through the emulator's registry
// API, as GameFabric's sidecar would. They have no callback, so allocating
// one dials nothing; each realistic Allocate start takes one.
func (fx *coldFixture) registerServers(ctx context.Context, n int) error {
	url := fx.c.EmulatorURL + "/" + stack.RegistryPath
	token := fx.cfg.GameFabric.RegistryTokens[0]
	for i := range n {
		port := 30000 + i
		body, _ := json.Marshal(map[string]any{
			"address": fmt.Sprintf("127.0.0.1:%d", port), "region": coldRegion, "priority": 0, "timeout": 600,
			"ports":      map[string]int{"game": port},
			"attributes": map[string]string{"env": "prag", "armadaset": "sample-game-armada-set"},
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("coldstart: registering a game server: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("coldstart: registering a game server with the emulator: %w", err)
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("coldstart: registering a game server: emulator answered %s: %s", resp.Status, msg)
		}
	}
	return nil
}

// The series: which binary gets which first event.

// coldSeries is one (binary, first event) pair and its samples.
type coldSeries struct {
	name, bin string
	env       []string
	event     string // description for the report
	scheduled bool
	realistic bool
	makeEvent func(round int) ([]byte, error)
	check     func(runtimeapi.Result) (string, error)

	answer        string
	totals, inits []time.Duration
}

// coldEvent is a first event: a file from events/, optionally edited.
type coldEvent struct {
	describe string
	file     string
	// edit adapts an HTTP API event for round; nil sends the file as is.
	edit func(req *events.APIGatewayV2HTTPRequest, round int) error
	// status is the HTTP status the function must answer; 0 marks a
	// scheduled event, which must simply succeed.
	status int
}

// coldStartEvents maps each function to its first events. The fast one
// (first) isolates process start, Go and SDK init and the first dispatch;
// the realistic one adds the round trips a real first request makes.
func coldStartEvents() map[string]struct{ first, realistic *coldEvent } {
	return map[string]struct{ first, realistic *coldEvent }{
		"AllocateFunction": {
			first: &coldEvent{file: "allocate-bad-request.json", status: http.StatusBadRequest,
				describe: "POST /v1/allocations with an invalid gameInstanceId: rejected by request validation before any AWS or GameFabric call"},
			realistic: &coldEvent{file: "allocate-new.json", status: http.StatusCreated, edit: editAllocate,
				describe: "POST /v1/allocations with a fresh gameInstanceId per start: Secrets Manager (moto) token fetch, DynamoDB claim, GameFabric emulator allocate, DynamoDB update"},
		},
		"LinkBackFunction": {
			first: &coldEvent{file: "link.json", status: http.StatusUnauthorized, edit: editNoAuth,
				describe: "POST …/link without its Authorization header: rejected before the DynamoDB lookup"},
			realistic: &coldEvent{file: "link.json", status: http.StatusOK, edit: editLink,
				describe: "POST …/link for the instance allocated earlier in the same round, with its PartnerGameToken: DynamoDB read and conditional update"},
		},
		"RegionsFunction": {
			first: &coldEvent{file: "get-regions.json", status: http.StatusMethodNotAllowed, edit: editAsPost,
				describe: "the GET /v1/regions event sent as POST: answered 405 by the function's own router without reading DynamoDB (API Gateway would not route it; it exercises the same adapter and router)"},
			realistic: &coldEvent{file: "get-regions.json", status: http.StatusOK,
				describe: "GET /v1/regions: DynamoDB scans of the ping cache and region health tables"},
		},
		"PingRefreshFunction": {
			first: &coldEvent{file: "ping-refresh-scheduled.json",
				describe: "the scheduled event: Secrets Manager (moto) token fetch, GameFabric emulator GET /ping, DynamoDB writes — necessarily real loopback calls"},
		},
		"HealthSweepFunction": {
			first: &coldEvent{file: "health-sweep-scheduled.json",
				describe: "the scheduled event: DynamoDB queries for overdue instances — necessarily real loopback calls"},
		},
	}
}

// coldRegion is where the registered servers live and allocate-new.json asks.
const coldRegion = "us-west"

// coldInstance is the game instance the realistic Allocate start of round
// creates and the realistic LinkBack start of the same round links.
func coldInstance(round int) (id, token string) {
	return fmt.Sprintf("gi-bench-%02d", round), fmt.Sprintf("bench-partner-token-%02d-0123456789abcdef", round)
}

func editAllocate(req *events.APIGatewayV2HTTPRequest, round int) error {
	var body map[string]any
	if err := json.Unmarshal([]byte(req.Body), &body); err != nil {
		return fmt.Errorf("allocate-new.json body: %w", err)
	}
	body["gameInstanceId"], body["partnerGameToken"] = coldInstance(round)
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req.Body = string(b)
	req.Headers["content-length"] = strconv.Itoa(len(b))
	return nil
}

func editLink(req *events.APIGatewayV2HTTPRequest, round int) error {
	id, token := coldInstance(round)
	old := req.PathParameters["gameInstanceId"]
	req.RawPath = strings.Replace(req.RawPath, old, id, 1)
	req.RequestContext.HTTP.Path = strings.Replace(req.RequestContext.HTTP.Path, old, id, 1)
	req.PathParameters["gameInstanceId"] = id
	req.Headers["authorization"] = "Bearer " + token
	return nil
}

func editNoAuth(req *events.APIGatewayV2HTTPRequest, _ int) error {
	delete(req.Headers, "authorization")
	return nil
}

func editAsPost(req *events.APIGatewayV2HTTPRequest, _ int) error {
	req.RequestContext.HTTP.Method = http.MethodPost
	req.RouteKey = "POST " + req.RawPath
	req.RequestContext.RouteKey = req.RouteKey
	return nil
}

// planColdStarts lists every series in the order a round runs them: the
// baseline first, then each function's fast and realistic series in
// template order (Allocate's realistic start must precede LinkBack's).
func planColdStarts(root string, targets []bootstrapTarget, bins map[string]string, fx *coldFixture) ([]*coldSeries, error) {
	hello := &coldSeries{name: helloWorldName, bin: bins[helloWorldName], event: "`{}`; the handler returns `{\"message\":\"hello\"}`",
		makeEvent: func(int) ([]byte, error) { return []byte("{}"), nil }, check: checkHelloWorld}
	plan := []*coldSeries{hello}
	specs := coldStartEvents()
	for _, t := range targets {
		if t.name == helloWorldName {
			continue
		}
		spec, ok := specs[t.name]
		if !ok {
			return nil, fmt.Errorf("coldstart: no first event defined for %s: add it to coldStartEvents in local/bench/coldstart.go", t.name)
		}
		env, err := fx.c.FunctionEnv(t.name, fx.refs)
		if err != nil {
			return nil, fmt.Errorf("coldstart: environment of %s: %w", t.name, err)
		}
		for _, e := range []*coldEvent{spec.first, spec.realistic} {
			if e == nil {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(root, "events", e.file))
			if err != nil {
				return nil, fmt.Errorf("coldstart: first event of %s: %w", t.name, err)
			}
			plan = append(plan, &coldSeries{
				name: t.name, bin: bins[t.name], env: env,
				event:     "`events/" + e.file + "`: " + e.describe,
				scheduled: e.status == 0, realistic: e == spec.realistic,
				makeEvent: coldEventFor(raw, e.edit), check: checkAnswer(e.status),
			})
		}
	}
	return plan, nil
}

func coldEventFor(raw []byte, edit func(*events.APIGatewayV2HTTPRequest, int) error) func(int) ([]byte, error) {
	if edit == nil {
		return func(int) ([]byte, error) { return raw, nil }
	}
	return func(round int) ([]byte, error) {
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("decoding the HTTP API event: %w", err)
		}
		if err := edit(&req, round); err != nil {
			return nil, err
		}
		return json.Marshal(req)
	}
}

func checkHelloWorld(res runtimeapi.Result) (string, error) {
	if res.FunctionError != nil {
		return "", fmt.Errorf("function error: %w", res.FunctionError)
	}
	if string(res.Payload) != `{"message":"hello"}` {
		return "", fmt.Errorf("hello-world answered %s", res.Payload)
	}
	return "ok", nil
}

// checkAnswer verifies each start answered as planned, so a misconfigured
// environment cannot pass as a fast cold start.
func checkAnswer(status int) func(runtimeapi.Result) (string, error) {
	return func(res runtimeapi.Result) (string, error) {
		if res.FunctionError != nil {
			return "", fmt.Errorf("function error: %w", res.FunctionError)
		}
		if status == 0 {
			if !json.Valid(res.Payload) {
				return "", fmt.Errorf("scheduled run answered non-JSON %q", res.Payload)
			}
			return "ok", nil
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(res.Payload, &resp); err != nil {
			return "", fmt.Errorf("answer %q is not an HTTP API response: %w", res.Payload, err)
		}
		if resp.StatusCode != status {
			return "", fmt.Errorf("answered HTTP %d, want %d: %s", resp.StatusCode, status, resp.Body)
		}
		return fmt.Sprintf("HTTP %d", status), nil
	}
}

// Statistics.

// csMedian is the middle sample (the mean of the two middle ones for an even
// count); 0 for no samples.
func csMedian(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// csPercentile is the nearest-rank percentile: always an observed sample, 0
// gives the minimum and 100 the maximum; 0 for no samples.
func csPercentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// csRatio is a/b, NaN when b is not positive so that it never meets a goal.
func csRatio(a, b time.Duration) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// csMillis formats a duration in milliseconds with one decimal.
func csMillis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func csTimes(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) + "×" }

// Reports.

// Markdown is the cold-start section of docs/benchmarks.md.
func (r *ColdStartReport) Markdown() string {
	var b strings.Builder
	b.WriteString("### Cold start\n\n")
	fmt.Fprintf(&b, "One start is a fresh process of the function's real `bootstrap`, driven through the Lambda Runtime API harness "+
		"(`local/harness/runtimeapi`), timed from just before the process starts until the response to its first invocation reaches the harness. "+
		"*Init* is the harness's init duration (process start to the first `/next` poll), Lambda's \"Init Duration\". "+
		"Each row is %d starts after one discarded warm-up round; every round starts each binary once, round-robin, one process at a time, "+
		"so machine noise spreads evenly. The baseline is a minimal aws-lambda-go hello-world (`local/bench/hello`) built the same way; "+
		"*× hello* is a median over hello-world's median. Goal: a first-response median at most %.1f× hello-world's. "+
		"*Init × hello* compares init alone, which is what start-up costs even when the first event makes real calls "+
		"(the scheduled functions').\n\n", r.Starts, r.GoalRatio)
	fmt.Fprintf(&b, "Lambda runs arm64, which this machine cannot execute, so the binaries are built for %s with the same flags as `make build` "+
		"(`CGO_ENABLED=0 -trimpath -tags lambda.norpc -ldflags='-s -w'`). Absolute times differ from Lambda's; the ratio is the figure that carries over. "+
		"Each function gets its template.yaml environment pointed at DynamoDB Local (tables created from template.yaml), "+
		"moto (Secrets Manager, holding the allocator token secret) and the GameFabric emulator, all on loopback. "+
		"1-minute load average during the measured starts: %s.\n\n", r.Platform, r.Load)

	fmt.Fprintf(&b, "| Function | Median ms | p90 ms | Min ms | Max ms | Init median ms | Init × hello | × hello | Goal ≤ %.1f× | Realistic first request: median ms (× hello) |\n", r.GoalRatio)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|:---:|---:|\n")
	h := r.Hello
	fmt.Fprintf(&b, "| %s (baseline) | %s | %s | %s | %s | %s | 1.00× | 1.00× | — | — |\n", helloWorldName,
		csMillis(h.Median), csMillis(h.P90), csMillis(h.Min), csMillis(h.Max), csMillis(h.InitMedian))
	for _, f := range r.Functions {
		s := f.First
		realistic := "same as first (scheduled)"
		if f.Realistic != nil {
			realistic = csMillis(f.Realistic.Median) + " (" + csTimes(f.Realistic.Ratio) + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Name, csMillis(s.Median), csMillis(s.P90), csMillis(s.Min), csMillis(s.Max),
			csMillis(s.InitMedian), csTimes(s.InitRatio), csTimes(s.Ratio), csGoalMark(s.MeetsGoal(r.GoalRatio)), realistic)
	}

	b.WriteString("\nFirst events (every start's answer was checked):\n\n")
	fmt.Fprintf(&b, "- **%s**: %s → %s\n", helloWorldName, h.Event, h.Answer)
	for _, f := range r.Functions {
		fmt.Fprintf(&b, "- **%s**, first: %s → %s\n", f.Name, f.First.Event, f.First.Answer)
		if f.Realistic != nil {
			fmt.Fprintf(&b, "- **%s**, realistic (init median %s ms): %s → %s\n", f.Name, csMillis(f.Realistic.InitMedian), f.Realistic.Event, f.Realistic.Answer)
		}
	}
	return b.String()
}

// Text is a compact table for the terminal.
func (r *ColdStartReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cold start, %s host build, %d starts each, ms (goal: median <= %.1fx hello-world; load average %s)\n",
		r.Platform, r.Starts, r.GoalRatio, r.Load)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "function\tmedian\tp90\tmin\tmax\tinit\tinit x\tx hello\tgoal\trealistic\tx hello\t")
	row := func(name string, s ColdStartSeries, goal string, real *ColdStartSeries) {
		rm, rx := "-", "-"
		if real != nil {
			rm, rx = csMillis(real.Median), strconv.FormatFloat(real.Ratio, 'f', 2, 64)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t\n", name, csMillis(s.Median), csMillis(s.P90), csMillis(s.Min), csMillis(s.Max),
			csMillis(s.InitMedian), s.InitRatio, s.Ratio, goal, rm, rx)
	}
	row(helloWorldName, r.Hello, "ref", nil)
	for _, f := range r.Functions {
		row(f.Name, f.First, csGoalWord(f.First.MeetsGoal(r.GoalRatio)), f.Realistic)
	}
	_ = w.Flush()
	return b.String()
}
