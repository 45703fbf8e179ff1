package bench

import "math"

// Prices, us-east-1, as of 2026-11 (the figures; AWS price pages).
const (
	PriceDate            = "2026-11"
	PriceLambdaGBSecond  = 0.0000133334 // arm64, per GB-second
	PriceLambdaRequests  = 0.20         // per 1M requests
	PriceDynamoWRU       = 0.625        // on-demand, per 1M write request units
	PriceDynamoRRU       = 0.125        // on-demand, per 1M read request units
	PriceHTTPAPI         = 1.00         // per 1M requests (first 300M/month)
	PriceSecretsPer10k   = 0.05         // per 10,000 API calls
	PriceLogsPerGB       = 0.50         // CloudWatch Logs ingestion
	CostGoal             = 3.00         // per 1M allocations
	LambdaMemoryMB       = 128
	lambdaMBPerVCPU      = 1769 // Lambda allots one full vCPU at 1,769 MB, proportionally less below
	tokenCacheTTLSeconds = 300  // TOKEN_CACHE_TTL default: one Secrets Manager call per warm instance per 5 min
	healthCacheTTLSecs   = 5    // the breaker caches region health 5 s per warm instance
	monthSeconds         = 30 * 24 * 3600
)

// CostInputs are the measured quantities the model uses.
type CostInputs struct {
	BilledMs         float64 // mean billed duration per allocate invocation
	CPUMs            float64 // CPU time per invocation, measured on this machine
	WRU              float64 // write request units per fresh allocation (table + indexes)
	HealthReadRRU    float64 // read request units one region-health read costs
	LogBytes         float64 // function output per allocation
	PlatformLogBytes float64 // Lambda's own START/END/REPORT records per invocation (estimate)
}

// Scenario is a traffic pattern: the amortised items depend on the rate
// per warm instance.
type Scenario struct {
	Name            string
	PerSecond       float64 // allocations per second, evenly spread
	WarmInstances   float64 // sandboxes kept warm to serve that rate
	HealthReads     float64 // region-health reads per allocation
	SecretsCalls    float64 // Secrets Manager calls per allocation
	Lines           []CostLine
	Total, WithLogs float64 // USD per 1M allocations
}

// CostLine is one item of the bill per 1M allocations.
type CostLine struct {
	Item, Basis string
	USD         float64
}

// Scenarios builds the bill for a low-volume month (1M allocations spread
// over 30 days) and a sustained 100 allocations/s.
func Scenarios(in CostInputs) []Scenario {
	var out []Scenario
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
		sc.SecretsCalls = 1 / (tokenCacheTTLSeconds * perInstance)
		sc.SecretsCalls = math.Min(sc.SecretsCalls, 1)
		sc.Lines = costLines(in, sc)
		for _, l := range sc.Lines {
			if l.Item == "CloudWatch Logs ingestion" {
				continue
			}
			sc.Total += l.USD
		}
		sc.WithLogs = sc.Total + sc.Lines[len(sc.Lines)-1].USD
		out = append(out, sc)
	}
	return out
}

func costLines(in CostInputs, sc Scenario) []CostLine {
	gbSeconds := in.BilledMs / 1000 * LambdaMemoryMB / 1024
	logGB := (in.LogBytes + in.PlatformLogBytes) * 1e6 / 1e9
	return []CostLine{
		{"Lambda duration", fmtF("%.1f ms billed × 0.125 GB × $%s/GB-s", in.BilledMs, plain(PriceLambdaGBSecond)), gbSeconds * PriceLambdaGBSecond * 1e6},
		{"Lambda requests", fmtF("1 per allocation × $%.2f/1M", PriceLambdaRequests), PriceLambdaRequests},
		{"HTTP API requests", fmtF("1 per allocation × $%.2f/1M", PriceHTTPAPI), PriceHTTPAPI},
		{"DynamoDB writes (GameInstancesTable + index)", fmtF("%.2f WRU × $%.3f/1M", in.WRU, PriceDynamoWRU), in.WRU * PriceDynamoWRU},
		{"DynamoDB region-health reads", fmtF("%.3f reads × %.0f RRU × $%.3f/1M", sc.HealthReads, in.HealthReadRRU, PriceDynamoRRU), sc.HealthReads * in.HealthReadRRU * PriceDynamoRRU},
		{"Secrets Manager", fmtF("%.2g calls × $%.2f/10k", sc.SecretsCalls, PriceSecretsPer10k), sc.SecretsCalls * PriceSecretsPer10k / 1e4 * 1e6},
		{"CloudWatch Logs ingestion", fmtF("%.0f B (%.0f function + %.0f platform) × $%.2f/GB", in.LogBytes+in.PlatformLogBytes, in.LogBytes, in.PlatformLogBytes, PriceLogsPerGB), logGB * PriceLogsPerGB},
	}
}

// CPUScaledBilledMs estimates the billed duration if the measured CPU work
// ran at 128 MB's CPU share (128/1769 of a vCPU) instead of a full core of
// this machine: an upper-bound sensitivity, since waiting is not slowed.
func CPUScaledBilledMs(in CostInputs) float64 {
	return math.Ceil(in.BilledMs + in.CPUMs*(lambdaMBPerVCPU/float64(LambdaMemoryMB)-1))
}
