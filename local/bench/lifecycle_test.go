package bench

import (
	"testing"
	"time"
)

// measuredGame is a whole game of 10 as play would leave it: a link, 40
// heartbeats (a third of their write units on the index) and an end, each
// call 2.4 ms (3 ms billed).
func measuredGame(e Endpoint, every time.Duration, heartbeatRRU, heartbeatWRU float64) LifecycleScenario {
	call := func(name string, n int, rru, wru, index float64) LifecycleCall {
		c := LifecycleCall{Name: name, N: n, Took: Summary{N: n, Mean: 2400 * time.Microsecond, P50: 2 * time.Millisecond},
			Requests: 1, ReadUnits: rru, WriteUnits: wru, IndexWrites: index}
		c.USDPerMillion = callUSD(c)
		return c
	}
	sc := LifecycleScenario{Endpoint: e, Every: every, Default: every == e.defaultEvery(),
		Link: call("link", 10, 1, 3, 2), Heartbeat: call("heartbeat", 400, heartbeatRRU, heartbeatWRU, heartbeatWRU/3), End: call("end", 10, 1, 2, 1)}
	sc.perGame(10)
	return sc
}

// A game's calls are priced per call from its measured figures: a Lambda
// request and 3 ms each, the units, and the HTTP API only behind it.
func TestLifecycleScenarioPrice(t *testing.T) {
	fn := measuredGame(FunctionURL, 30*time.Second, 0, 1.5)
	if fn.Calls != 42 || fn.Heartbeats != 40 || !near(fn.WriteUnits, 3+40*1.5+2) || !near(fn.IndexWrites, 2+40*0.5+1) || !near(fn.ReadUnits, 2) {
		t.Fatalf("per game: %+v", fn)
	}
	fn.price(3.25, 4.5, 0.6)
	calls := 42*0.20 + 42*3*lambdaUSDPerMs + 2*prices.DynamoRRU + 65*prices.DynamoWRU
	if !near(fn.CallsUSD, calls) || !near(fn.WholeLife, 3.25+calls+4.5+0.6) {
		t.Errorf("function URL: calls $%.4f, whole life $%.4f; want $%.4f, $%.4f", fn.CallsUSD, fn.WholeLife, calls, 3.25+calls+4.5+0.6)
	}
	// 1.5 write units a heartbeat: over issue 35's 1.05.
	if fn.HeartbeatMet || !near(fn.HeartbeatWrites, 60) {
		t.Errorf("heartbeats: met %v, %.2f write units per game", fn.HeartbeatMet, fn.HeartbeatWrites)
	}
	// The calls' price is the per-call prices summed, however itemised.
	if sum := fn.Link.At(FunctionURL) + 40*fn.Heartbeat.At(FunctionURL) + fn.End.At(FunctionURL); !near(sum, fn.CallsUSD) {
		t.Errorf("per-call sum $%.4f, itemised $%.4f", sum, fn.CallsUSD)
	}
	// Writes are the largest item: 65 WRU = $40.63 of $56.15, over the goal.
	if fn.Top.Item != "DynamoDB writes" || !near(fn.Top.USD, 65*prices.DynamoWRU) || fn.Met || !near(fn.MissedBy, fn.WholeLife-LifeGoal) {
		t.Errorf("top %+v, met %v, missed by %.2f", fn.Top, fn.Met, fn.MissedBy)
	}
	api := measuredGame(HTTPAPI, 10*time.Second, 0.5, 0.1)
	api.price(3.25, 4.5, 0.6)
	want := 42*(1.00+0.20+3*lambdaUSDPerMs) + (2+40*0.5)*prices.DynamoRRU + (5+40*0.1)*prices.DynamoWRU
	if !near(api.CallsUSD, want) || !api.Default {
		t.Errorf("HTTP API: calls $%.4f, want $%.4f (default %v)", api.CallsUSD, want, api.Default)
	}
	if api.Top.Item != "HTTP API requests" || !api.HeartbeatMet {
		t.Errorf("HTTP API: top %+v", api.Top)
	}
}

// The defaults are FunctionUrl every HEALTH_PERIOD and HttpApi every
// third of it; price finds them among the four scenarios.
func TestLifecycleDefaults(t *testing.T) {
	l := LifecycleResult{Scenarios: lifecycleScenarios()}
	if len(l.Scenarios) != 4 {
		t.Fatalf("%d scenarios", len(l.Scenarios))
	}
	for i, sc := range l.Scenarios {
		l.Scenarios[i] = measuredGame(sc.Endpoint, sc.Every, 0, 1)
	}
	l.price(3, 4, 0.5)
	if l.Default == nil || l.Default.Endpoint != FunctionURL || l.Default.Every != 30*time.Second ||
		l.HTTPDefault == nil || l.HTTPDefault.Endpoint != HTTPAPI || l.HTTPDefault.Every != 10*time.Second {
		t.Fatalf("defaults %+v, %+v", l.Default, l.HTTPDefault)
	}
	if l.at(FunctionURL) != l.Default || l.at(HTTPAPI) != l.HTTPDefault {
		t.Error("at does not name the defaults")
	}
	for _, sc := range l.Scenarios {
		if sc.WholeLife == 0 {
			t.Errorf("%s every %s not priced", sc.Endpoint, sc.Every)
		}
	}
}

// Heartbeats arrive a little later than asked, always 20–60 ms.
func TestHeartbeatJitter(t *testing.T) {
	for beat := range 200 {
		if d := heartbeatJitter(beat); d < 20*time.Millisecond || d > 60*time.Millisecond {
			t.Fatalf("beat %d: %s", beat, d)
		}
	}
}
