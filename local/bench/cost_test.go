package bench

import (
	"math"
	"testing"
)

// The model's arithmetic, checked by hand: 30 ms at 128 MB, 3 write units.
func TestScenariosPriceTheInputs(t *testing.T) {
	in := CostInputs{BilledMs: 30, WRU: 3, HealthReadRRU: 2, LogBytes: 1000}
	for _, sc := range Scenarios(in) {
		byItem := map[string]float64{}
		for _, l := range sc.Lines {
			byItem[l.Item] = l.USD
		}
		checks := map[string]float64{
			"Lambda duration": 0.030 * 0.125 * PriceLambdaGBSecond * 1e6,
			"DynamoDB writes (GameInstancesTable + index)": 3 * PriceDynamoWRU,
			"HTTP API requests":                            PriceHTTPAPI,
			"CloudWatch Logs ingestion":                    1000 * 1e6 / 1e9 * PriceLogsPerGB,
		}
		for item, want := range checks {
			if math.Abs(byItem[item]-want) > 1e-9 {
				t.Errorf("%s: %s = %v, want %v", sc.Name, item, byItem[item], want)
			}
		}
		if sc.HealthReads <= 0 || sc.HealthReads > 1 || sc.SecretsCalls <= 0 || sc.SecretsCalls > 1 {
			t.Errorf("%s: amortised shares out of range: %+v", sc.Name, sc)
		}
		if math.Abs(sc.WithLogs-sc.Total-byItem["CloudWatch Logs ingestion"]) > 1e-9 {
			t.Errorf("%s: logs must be the only difference between Total and WithLogs", sc.Name)
		}
	}
}
