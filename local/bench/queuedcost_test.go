package bench

import (
	"math"
	"testing"
	"time"
)

// A cohort's bill beyond a fresh allocation is its items' sum, and the
// retrying caller's reference counts every POST before the wait ended.
func TestQueuedCohortPrice(t *testing.T) {
	c := queuedCohort(10*time.Second, 6, 3, 60)
	sc := Scenario{HealthReads: 0.5, SecretsCalls: 0.01}
	c.price(sc, CostInputs{HealthReadRRU: 2}, 3, 5*time.Second)
	sum := 0.0
	for _, l := range c.Lines {
		sum += l.USD
	}
	if math.Abs(sum-c.Extra) > 1e-9 || math.Abs(c.Total-(3+c.Extra)) > 1e-9 || math.Abs(c.Times-c.Total/3) > 1e-9 {
		t.Errorf("extra %v of lines summing to %v, total %v, times %v", c.Extra, sum, c.Total, c.Times)
	}
	want := map[string]float64{
		"SQS requests":               (6 + 2*3) * 0.40,
		"DynamoDB writes (worker)":   60 * 0.625,
		"PlacementFunction requests": 3 * 0.20,
		// A free-room Query per run, at a Query's least (DynamoDB Local reports none).
		"DynamoDB reads (worker)": (6 + 6*0.5) * 0.125,
		// 6 runs + 1 outcome pass the filters; a fresh allocation has the outcome's.
		"Events (EventsFunction, EventBridge)": 6*0.2 + 1*1.00,
	}
	for _, l := range c.Lines {
		if w, ok := want[l.Item]; ok && math.Abs(l.USD-w) > 1e-9 {
			t.Errorf("%s: $%v, want $%v", l.Item, l.USD, w)
		}
	}
	if c.RetryPosts != 2 || c.RetryExtra != 6 {
		t.Errorf("a caller retrying every 5 s for 10 s: %d failed POSTs, $%v", c.RetryPosts, c.RetryExtra)
	}
	// Three more invocations, each with a receive and a delete of its own.
	if w := 3 * (0.20 + 40*lambdaUSDPerMs + 0.5*2*0.125 + 0.01*0.05/1e4*1e6 + 2*0.40); math.Abs(c.Unbatched-w) > 1e-9 {
		t.Errorf("unbatched %v, want %v", c.Unbatched, w)
	}
}
