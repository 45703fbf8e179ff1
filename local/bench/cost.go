package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
)

// Prices are AWS's list prices the cost model uses.
type Prices struct {
	Date                      string
	LambdaGBSecond            float64 // arm64, per GB-second
	LambdaRequests            float64 // per 1M requests
	DynamoWRU, DynamoRRU      float64 // on-demand, per 1M request units
	HTTPAPI                   float64 // per 1M requests (first 300M/month)
	SecretsPer10k             float64 // per 10,000 API calls
	LogsPerGB                 float64 // CloudWatch Logs ingestion
	EventBridgeEvents         float64 // custom events put, per 1M (64 KB chunks)
	SQSRequests               float64 // standard queue, per 1M requests (64 KB chunks)
	LambdaMemoryMB, MBPerVCPU float64 // the function's memory; Lambda allots one vCPU at 1,769 MB, proportionally less below
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

// CostInputs are the measured quantities the model uses.
type CostInputs struct {
	BilledMs, BilledP99Ms float64 // billed duration per allocate invocation: mean, p99
	CPUMs                 float64 // CPU time per invocation, measured on this machine
	WRU                   float64 // write request units per fresh allocation (table + indexes)
	IndexWRU              float64 // of which the HealthDeadlineIndex entry
	HealthReadRRU         float64 // read request units one region-health read costs
	RoomQueries           float64 // FreeRoomsIndex Queries per allocation (rooms first)
	LogBytes, LogLines    float64 // function output per allocation
	PlatformLogBytes      float64 // Lambda's own platform records per invocation (estimate)
}

// CostModel is the bill per 1M allocations in two traffic patterns.
type CostModel struct {
	Prices    Prices
	Goal      float64
	Inputs    CostInputs
	Scenarios []Scenario
	// Worst is the dearest scenario and Top its two largest items.
	Worst Scenario
	Top   []CostLine
	// MissedBy is how far Worst.Total is over the goal; WithoutIndex what
	// it would be without the index entry's write units.
	MissedBy, WithoutIndex float64
	// CPUScaledMs estimates the billed duration if the measured CPU work ran
	// at the function's CPU share (128/1769 of a vCPU) instead of a full
	// core of this machine: an upper bound, since waiting is not slowed.
	CPUScaledMs, CPUScaledExtra float64
}

// Scenario is a traffic pattern: the amortised items depend on the rate
// per warm sandbox.
type Scenario struct {
	Name          string
	PerSecond     float64 // allocations per second, evenly spread
	WarmInstances float64 // sandboxes kept warm to serve that rate
	HealthReads   float64 // region-health reads per allocation
	SecretsCalls  float64 // Secrets Manager calls per allocation
	Lines         []CostLine
	Logs          CostLine // CloudWatch Logs ingestion, priced apart
	Total         float64  // USD per 1M allocations, logs apart
	WithLogs      float64
	Met           bool // Total ≤ CostGoal
}

// CostLine is one item of the bill per 1M allocations.
type CostLine struct {
	Item, Basis string
	USD         float64
	Share       float64 // of the scenario's total; set for CostModel.Top
}

// costInputs are the cost model's inputs from the billed-duration run and
// the request counts.
func costInputs(b BilledResult, q RequestsResult) CostInputs {
	return CostInputs{
		BilledMs: b.BilledMeanMs, BilledP99Ms: b.BilledP99Ms, CPUMs: toMs(b.CPUPerInvocation),
		WRU: q.FreshTableUnits + q.FreshIndexUnits, IndexWRU: q.FreshIndexUnits, HealthReadRRU: q.HealthReadRRU, RoomQueries: q.FreshRoomQueries,
		LogBytes: b.LogBytes, LogLines: b.LogLines,
		PlatformLogBytes: float64(PlatformLogBytes(toMs(b.Duration.Mean), b.BilledMeanMs)),
	}
}

// NewCostModel prices a low-volume month (1M allocations spread over 30
// days) and a sustained 100 allocations/s.
func NewCostModel(in CostInputs) CostModel {
	m := CostModel{Prices: prices, Goal: CostGoal, Inputs: in}
	for _, sc := range []Scenario{
		{Name: "1M allocations/month (0.39/s)", PerSecond: 1e6 / monthSeconds},
		{Name: "sustained 100 allocations/s", PerSecond: 100},
	} {
		// Little's law: busy sandboxes = rate × duration; at least one stays warm.
		sc.WarmInstances = math.Max(1, math.Ceil(sc.PerSecond*in.BilledMs/1000))
		perInstance := sc.PerSecond / sc.WarmInstances
		// Poisson arrivals: after a read, the cache serves the arrivals of
		// the next 5 s, then the next arrival reads again.
		sc.HealthReads = 1 / (1 + healthCacheTTLSecs*perInstance)
		sc.SecretsCalls = math.Min(1, 1/(tokenCacheTTLSeconds*perInstance))
		sc.Lines, sc.Logs = costLines(in, sc)
		for _, l := range sc.Lines {
			sc.Total += l.USD
		}
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

// largest is the dearest of lines.
func largest(lines []CostLine) CostLine {
	return slices.MaxFunc(lines, func(a, b CostLine) int { return cmp.Compare(a.USD, b.USD) })
}

// lambdaUSDPerMs is one billed millisecond per 1M invocations.
var lambdaUSDPerMs = prices.LambdaMemoryMB / 1024 / 1000 * prices.LambdaGBSecond * 1e6

func costLines(in CostInputs, sc Scenario) ([]CostLine, CostLine) {
	p := prices
	line := func(item string, usd float64, basis string, args ...any) CostLine {
		return CostLine{Item: item, Basis: fmt.Sprintf(basis, args...), USD: usd}
	}
	return []CostLine{
			line("Lambda duration", in.BilledMs*lambdaUSDPerMs, "%.1f ms billed × %g GB × $%.10f/GB-s", in.BilledMs, p.LambdaMemoryMB/1024, p.LambdaGBSecond),
			line("Lambda requests", p.LambdaRequests, "1 per allocation × $%.2f/1M", p.LambdaRequests),
			line("HTTP API requests", p.HTTPAPI, "1 per allocation × $%.2f/1M", p.HTTPAPI),
			line("DynamoDB writes (GameInstancesTable + index)", in.WRU*p.DynamoWRU, "%.2f WRU × $%.3f/1M", in.WRU, p.DynamoWRU),
			line("DynamoDB region-health reads", sc.HealthReads*in.HealthReadRRU*p.DynamoRRU, "%.3f reads × %.0f RRU × $%.3f/1M", sc.HealthReads, in.HealthReadRRU, p.DynamoRRU),
			line("DynamoDB free-room queries (rooms first)", in.RoomQueries*queryMinRRU*p.DynamoRRU, "%.2f queries × %.1f RRU (a Query's least, eventually consistent) × $%.3f/1M",
				in.RoomQueries, queryMinRRU, p.DynamoRRU),
			line("Secrets Manager", sc.SecretsCalls*p.SecretsPer10k/1e4*1e6, "%.2g calls × $%.2f/10k", sc.SecretsCalls, p.SecretsPer10k),
		}, line("CloudWatch Logs ingestion", (in.LogBytes+in.PlatformLogBytes)*1e6/1e9*p.LogsPerGB, "%.0f B (%.0f function + %.0f platform) × $%.2f/GB",
			in.LogBytes+in.PlatformLogBytes, in.LogBytes, in.PlatformLogBytes, p.LogsPerGB)
}

// PlatformLogBytes estimates what Lambda itself writes to the function's
// log group per invocation with LoggingConfig LogFormat JSON (template.yaml):
// a platform.start and a platform.report record. They are not produced
// locally, so they are built here in the documented shape with this run's
// figures and measured; the estimate is labelled as such in the report.
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
