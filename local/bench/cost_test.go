package bench

import (
	"math"
	"testing"
)

// The model's arithmetic, checked by hand: 30 ms at 128 MB, 3 write units
// of which 1 on the index, 2 read units per health read, 1000 log bytes.
func TestCostModelPricesTheInputs(t *testing.T) {
	m := NewCostModel(CostInputs{BilledMs: 30, CPUMs: 2, WRU: 3, IndexWRU: 1, HealthReadRRU: 2, LogBytes: 1000})
	if len(m.Scenarios) != 2 {
		t.Fatalf("%d scenarios", len(m.Scenarios))
	}
	for _, sc := range m.Scenarios {
		byItem := map[string]float64{sc.Logs.Item: sc.Logs.USD}
		for _, l := range sc.Lines {
			byItem[l.Item] = l.USD
		}
		for _, c := range []struct {
			item string
			want float64
		}{
			{"Lambda duration", 0.030 * 0.125 * prices.LambdaGBSecond * 1e6},
			{"Lambda requests", prices.LambdaRequests},
			{"HTTP API requests", prices.HTTPAPI},
			{"DynamoDB writes (GameInstancesTable + index)", 3 * prices.DynamoWRU},
			{"DynamoDB region-health reads", sc.HealthReads * 2 * prices.DynamoRRU},
			{"Secrets Manager", sc.SecretsCalls * prices.SecretsPer10k * 100},
			{"CloudWatch Logs ingestion", 1000 * 1e6 / 1e9 * prices.LogsPerGB},
		} {
			if math.Abs(byItem[c.item]-c.want) > 1e-9 {
				t.Errorf("%s: %s = %v, want %v", sc.Name, c.item, byItem[c.item], c.want)
			}
		}
		if sc.HealthReads <= 0 || sc.HealthReads > 1 || sc.SecretsCalls <= 0 || sc.SecretsCalls > 1 {
			t.Errorf("%s: amortised shares out of range: %+v", sc.Name, sc)
		}
		if math.Abs(sc.WithLogs-sc.Total-sc.Logs.USD) > 1e-9 || sc.Met != (sc.Total <= CostGoal) {
			t.Errorf("%s: total %v, with logs %v, met %v", sc.Name, sc.Total, sc.WithLogs, sc.Met)
		}
	}
	if m.Worst.Total < m.Scenarios[0].Total || m.Worst.Total < m.Scenarios[1].Total {
		t.Errorf("worst scenario %q is not the dearest", m.Worst.Name)
	}
	if m.Top[0].Item != "DynamoDB writes (GameInstancesTable + index)" || m.Top[1].Item != "HTTP API requests" {
		t.Errorf("top items %+v", m.Top)
	}
	if math.Abs(m.Worst.Total-m.WithoutIndex-prices.DynamoWRU) > 1e-9 || math.Abs(m.MissedBy-(m.Worst.Total-CostGoal)) > 1e-9 {
		t.Errorf("without index %v, missed by %v", m.WithoutIndex, m.MissedBy)
	}
	// 2 ms of CPU at 128/1769 of a vCPU: 2 × (1769/128 − 1) ≈ 25.6 ms more.
	if m.CPUScaledMs != 56 {
		t.Errorf("CPU-scaled billed duration %v ms, want 56", m.CPUScaledMs)
	}
}
