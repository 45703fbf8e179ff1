package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// Prices are AWS's list prices, per 1M requests or units unless named.
type Prices struct {
	Date                                    string
	LambdaGBSecond, LambdaRequests          float64
	DynamoWRU, DynamoRRU                    float64
	HTTPAPI, EventBridgeEvents, SQSRequests float64
	SecretsPer10k, LogsPerGB                float64
	LambdaMemoryMB, MBPerVCPU               float64
}

// prices: us-east-1, as of 2026-11 (the AWS price pages).
var prices = Prices{Date: "2026-11", LambdaGBSecond: 0.0000133334, LambdaRequests: 0.20, DynamoWRU: 0.625, DynamoRRU: 0.125,
	HTTPAPI: 1.00, SecretsPer10k: 0.05, LogsPerGB: 0.50, EventBridgeEvents: 1.00, SQSRequests: 0.40, LambdaMemoryMB: 128, MBPerVCPU: 1769}

const (
	CostGoal             = 3.00 // USD per 1M allocations
	tokenCacheTTLSeconds = 300  // TOKEN_CACHE_TTL default: one Secrets Manager call per warm sandbox per 5 min
	healthCacheTTLSecs   = 5    // the breaker caches region health 5 s per warm sandbox
	monthSeconds         = 30 * 24 * 3600
	// queryMinRRU is what DynamoDB charges a Query that reads (almost)
	// nothing, eventually consistent; DynamoDB Local reports 0 for it.
	queryMinRRU = 0.5
)

var lambdaUSDPerMs = prices.LambdaMemoryMB / 1024 / 1000 * prices.LambdaGBSecond * 1e6

func invocationUSD(billedMs float64) float64 { return prices.LambdaRequests + billedMs*lambdaUSDPerMs }

func dynamoUSD(reads, writes float64) float64 {
	return reads*prices.DynamoRRU + writes*prices.DynamoWRU
}

func logsUSD(bytes float64) float64 { return bytes * 1e6 / 1e9 * prices.LogsPerGB }

// CostInputs are the measured quantities the model uses, per allocation.
type CostInputs struct {
	BilledMs, BilledP99Ms, CPUMs         float64
	WRU, IndexWRU, HealthReadRRU         float64
	RoomQueries                          float64
	LogBytes, LogLines, PlatformLogBytes float64
}

// CostModel is the bill per 1M allocations in two traffic patterns.
// CPUScaledMs is the billed duration were the CPU work slowed to a 128 MB
// share: an upper bound, waiting is not slowed.
type CostModel struct {
	Prices                      Prices
	Goal                        float64
	Inputs                      CostInputs
	Scenarios                   []Scenario
	Worst                       Scenario
	Top                         []CostLine
	MissedBy, WithoutIndex      float64
	CPUScaledMs, CPUScaledExtra float64
}

// Scenario is a traffic pattern: the amortised items depend on the rate
// per warm sandbox.
type Scenario struct {
	Name                      string
	PerSecond, WarmInstances  float64
	HealthReads, SecretsCalls float64 // per allocation
	Lines                     []CostLine
	Logs                      CostLine // priced apart
	Total, WithLogs           float64  // USD per 1M allocations
	Met                       bool     // Total ≤ CostGoal
}

func (sc Scenario) amortised(rru float64) float64 {
	return sc.HealthReads*rru*prices.DynamoRRU + sc.SecretsCalls*prices.SecretsPer10k/1e4*1e6
}

// CostLine is one item of a bill per 1M.
type CostLine struct {
	Item, Basis string
	USD, Share  float64
}

func costLine(item string, usd float64, basis string, args ...any) CostLine {
	return CostLine{Item: item, Basis: fmt.Sprintf(basis, args...), USD: usd}
}

func sumUSD(lines []CostLine) (total float64) {
	for _, l := range lines {
		total += l.USD
	}
	return total
}

func largest(lines []CostLine) CostLine {
	return slices.MaxFunc(lines, func(a, b CostLine) int { return cmp.Compare(a.USD, b.USD) })
}

func costInputs(b BilledResult, q RequestsResult) CostInputs {
	return CostInputs{
		BilledMs: b.BilledMeanMs, BilledP99Ms: b.BilledP99Ms, CPUMs: toMs(b.CPUPerInvocation),
		WRU: q.FreshTableUnits + q.FreshIndexUnits, IndexWRU: q.FreshIndexUnits, HealthReadRRU: q.HealthReadRRU, RoomQueries: q.FreshRoomQueries,
		LogBytes: b.LogBytes, LogLines: b.LogLines, PlatformLogBytes: float64(PlatformLogBytes(toMs(b.Duration.Mean), b.BilledMeanMs)),
	}
}

// NewCostModel prices 1M allocations a month and a sustained 100/s.
func NewCostModel(in CostInputs) CostModel {
	m := CostModel{Prices: prices, Goal: CostGoal, Inputs: in}
	for _, sc := range []Scenario{{Name: "1M allocations/month (0.39/s)", PerSecond: 1e6 / monthSeconds}, {Name: "sustained 100 allocations/s", PerSecond: 100}} {
		// Little's law: busy sandboxes = rate × duration; one stays warm.
		sc.WarmInstances = math.Max(1, math.Ceil(sc.PerSecond*in.BilledMs/1000))
		perInstance := sc.PerSecond / sc.WarmInstances
		// Poisson arrivals: after a read, the cache serves the arrivals of
		// the next 5 s, then the next arrival reads again.
		sc.HealthReads = 1 / (1 + healthCacheTTLSecs*perInstance)
		sc.SecretsCalls = math.Min(1, 1/(tokenCacheTTLSeconds*perInstance))
		sc.Lines, sc.Logs = costLines(in, sc)
		sc.Total = sumUSD(sc.Lines)
		sc.WithLogs, sc.Met = sc.Total+sc.Logs.USD, sc.Total <= CostGoal
		m.Scenarios = append(m.Scenarios, sc)
	}
	m.Worst = slices.MaxFunc(m.Scenarios, func(a, b Scenario) int { return cmp.Compare(a.Total, b.Total) })
	m.Top = slices.SortedFunc(slices.Values(m.Worst.Lines), func(a, b CostLine) int { return cmp.Compare(b.USD, a.USD) })[:2]
	for i := range m.Top {
		m.Top[i].Share = m.Top[i].USD / m.Worst.Total
	}
	m.MissedBy = m.Worst.Total - CostGoal
	m.WithoutIndex = m.Worst.Total - in.IndexWRU*prices.DynamoWRU
	m.CPUScaledMs = math.Ceil(in.BilledMs + in.CPUMs*(prices.MBPerVCPU/prices.LambdaMemoryMB-1))
	m.CPUScaledExtra = (m.CPUScaledMs - in.BilledMs) * lambdaUSDPerMs
	return m
}

func costLines(in CostInputs, sc Scenario) ([]CostLine, CostLine) {
	p, logs := prices, in.LogBytes+in.PlatformLogBytes
	return []CostLine{
			costLine("Lambda duration", in.BilledMs*lambdaUSDPerMs, "%.1f ms billed × %g GB × $%.10f/GB-s", in.BilledMs, p.LambdaMemoryMB/1024, p.LambdaGBSecond),
			costLine("Lambda requests", p.LambdaRequests, "1 per allocation × $%.2f/1M", p.LambdaRequests),
			costLine("HTTP API requests", p.HTTPAPI, "1 per allocation × $%.2f/1M", p.HTTPAPI),
			costLine("DynamoDB writes (GameInstancesTable + index)", in.WRU*p.DynamoWRU, "%.2f WRU × $%.3f/1M", in.WRU, p.DynamoWRU),
			costLine("DynamoDB region-health reads", sc.HealthReads*in.HealthReadRRU*p.DynamoRRU, "%.3f reads × %.0f RRU × $%.3f/1M", sc.HealthReads, in.HealthReadRRU, p.DynamoRRU),
			costLine("DynamoDB free-room queries (rooms first)", in.RoomQueries*queryMinRRU*p.DynamoRRU,
				"%.2f queries × %.1f RRU (a Query's least, eventually consistent) × $%.3f/1M", in.RoomQueries, queryMinRRU, p.DynamoRRU),
			costLine("Secrets Manager", sc.SecretsCalls*p.SecretsPer10k/1e4*1e6, "%.2g calls × $%.2f/10k", sc.SecretsCalls, p.SecretsPer10k),
		}, costLine("CloudWatch Logs ingestion", logsUSD(logs), "%.0f B (%.0f function + %.0f platform) × $%.2f/GB",
			logs, in.LogBytes, in.PlatformLogBytes, p.LogsPerGB)
}

// PlatformLogBytes estimates Lambda's platform.start and platform.report
// records (LogFormat JSON) in their documented shape: none are made locally.
func PlatformLogBytes(durationMs, billedMs float64) int {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	id := "6f7f0961-8b3a-4c4b-9a2e-3f0c2d1e5a77" // a request id's length
	start, _ := json.Marshal(map[string]any{"time": now, "type": "platform.start",
		"record": map[string]any{"requestId": id, "version": "$LATEST"}})
	report, _ := json.Marshal(map[string]any{"time": now, "type": "platform.report",
		"record": map[string]any{"requestId": id, "status": "success", "metrics": map[string]any{
			"durationMs": durationMs, "billedDurationMs": billedMs, "memorySizeMB": prices.LambdaMemoryMB, "maxMemoryUsedMB": 30}}})
	return len(start) + 1 + len(report) + 1
}

// BilledResult is the allocate function's Lambda Duration per invocation
// from one warm sandbox of the real bootstrap, billed rounded up to 1 ms,
// its CPU time (/proc, 10 ms ticks) and its output (what CloudWatch Logs
// would ingest).
type BilledResult struct {
	Duration                  Summary
	BilledMeanMs, BilledP99Ms float64
	CPUPerInvocation          time.Duration
	LogBytes, LogLines        float64
}

// MeasureBilled warms one sandbox of the allocate bootstrap up through the
// Runtime API harness, then invokes n fresh allocations one by one.
func MeasureBilled(ctx context.Context, s *Stack, n int, log io.Writer) (BilledResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var res BilledResult
	env, err := s.FunctionEnv(AllocateFunction, s.Refs)
	if err != nil {
		return res, err
	}
	out := &countingWriter{}
	rt, err := runtimeapi.Start(ctx, s.Bin, env, runtimeapi.WithFunctionName(AllocateFunction), runtimeapi.WithLogOutput(out))
	if err != nil {
		return res, fmt.Errorf("billed duration: start the sandbox: %w", err)
	}
	defer rt.Close()
	run := runID()
	invoke := func(i int) (time.Duration, error) {
		ev, _ := json.Marshal(apiEvent(allocateRequest(fmt.Sprintf("billed-%s-%d", run, i), RegionOK), i))
		r, err := rt.Invoke(ctx, ev, functionTimeout)
		if err != nil {
			return 0, fmt.Errorf("billed duration: invoke: %w", err)
		}
		var resp events.APIGatewayV2HTTPResponse
		if r.FunctionError != nil || json.Unmarshal(r.Payload, &resp) != nil || resp.StatusCode != http.StatusCreated {
			return 0, fmt.Errorf("billed duration: invocation answered %s %v:\n%s", r.Payload, r.FunctionError, rt.Logs())
		}
		return r.Duration, nil
	}
	// The first invocation is a cold start and fetches the token; a few more
	// settle connection pools.
	for i := range 5 {
		if _, err := invoke(-1 - i); err != nil {
			return res, err
		}
	}
	sandbox, err := sandboxProcess(rt.Addr())
	if err != nil {
		return res, fmt.Errorf("billed duration: %w", err)
	}
	cpu0, err := sandbox.Stat()
	if err != nil {
		return res, err
	}
	time.Sleep(50 * time.Millisecond) // let the warm-up's log lines through the pipe
	bytes0, lines0 := out.counts()
	var durations, billed []time.Duration
	for i := range n {
		d, err := invoke(i)
		if err != nil {
			return res, err
		}
		durations, billed = append(durations, d), append(billed, time.Duration(math.Ceil(toMs(d)))*time.Millisecond)
	}
	cpu1, err := sandbox.Stat()
	if err != nil {
		return res, err
	}
	time.Sleep(50 * time.Millisecond)
	bytes1, lines1 := out.counts()
	res.Duration = Summarize(durations)
	b := Summarize(billed)
	res.BilledMeanMs, res.BilledP99Ms = toMs(b.Mean), toMs(b.P99)
	res.CPUPerInvocation = time.Duration((cpu1.CPUTime() - cpu0.CPUTime()) / float64(n) * float64(time.Second))
	res.LogBytes, res.LogLines = float64(bytes1-bytes0)/float64(n), float64(lines1-lines0)/float64(n)
	progress(log, "billed duration: p50 %s p99 %s, billed mean %.1f ms, CPU %s per invocation, %.0f log bytes per invocation",
		fmtMs(res.Duration.P50), fmtMs(res.Duration.P99), res.BilledMeanMs, fmtMs(res.CPUPerInvocation), res.LogBytes)
	return res, nil
}
