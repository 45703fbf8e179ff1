package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// callLines are a game's link-back calls per 1M games, item by item, from
// the scenario's measured per-game figures.
func (sc LifecycleScenario) callLines() []CostLine {
	p := prices
	billedMs := math.Ceil(toMs(sc.Link.Took.Mean)) + sc.Heartbeats*math.Ceil(toMs(sc.Heartbeat.Took.Mean)) + math.Ceil(toMs(sc.End.Took.Mean))
	lines := []CostLine{
		{Item: "Lambda requests", Basis: fmt.Sprintf("%.1f calls × $%.2f/1M", sc.Calls, p.LambdaRequests), USD: sc.Calls * p.LambdaRequests},
		{Item: "Lambda duration", Basis: fmt.Sprintf("%.0f ms billed per game (each call's mean handler time rounded up)", billedMs), USD: billedMs * lambdaUSDPerMs},
	}
	if g := sc.Endpoint.gateway(); g > 0 {
		lines = append(lines, CostLine{Item: "HTTP API requests", Basis: fmt.Sprintf("%.1f calls × $%.2f/1M", sc.Calls, g), USD: sc.Calls * g})
	}
	return append(lines,
		CostLine{Item: "DynamoDB reads", Basis: fmt.Sprintf("%.2f RRU per game × $%.3f/1M", sc.ReadUnits, p.DynamoRRU), USD: sc.ReadUnits * p.DynamoRRU},
		CostLine{Item: "DynamoDB writes", Basis: fmt.Sprintf("%.2f WRU per game (%.2f on the index) × $%.3f/1M", sc.WriteUnits, sc.IndexWrites, p.DynamoWRU),
			USD: sc.WriteUnits * p.DynamoWRU})
}

// price fills in the scenario's bill per 1M games: its calls, and its
// whole life with the allocation's and the events' per-game prices.
func (sc *LifecycleScenario) price(allocation, events float64) {
	sc.Lines, sc.CallsUSD = sc.callLines(), 0
	for _, l := range sc.Lines {
		sc.CallsUSD += l.USD
	}
	sc.Allocation, sc.Events = allocation, events
	sc.WholeLife = allocation + sc.CallsUSD + events
	life := append(slices.Clone(sc.Lines),
		CostLine{Item: "allocation", USD: allocation}, CostLine{Item: "events", USD: events})
	sc.Top = slices.MaxFunc(life, func(a, b CostLine) int { return cmp.Compare(a.USD, b.USD) })
	sc.WritesUSD = sc.WriteUnits * prices.DynamoWRU
	if sc.WholeLife > 0 {
		sc.Top.Share, sc.WritesShare = sc.Top.USD/sc.WholeLife, sc.WritesUSD/sc.WholeLife
	}
	sc.Met, sc.MissedBy = sc.WholeLife <= LifeGoal, math.Max(0, sc.WholeLife-LifeGoal)
	// What the heartbeats write to HealthDeadlineIndex, and the whole life
	// without it: the next step when the goal is missed.
	sc.HeartbeatIndexWrites = sc.Heartbeats * sc.Heartbeat.IndexWrites
	sc.WithoutHeartbeatIndex = sc.WholeLife - sc.HeartbeatIndexWrites*prices.DynamoWRU
}

// price prices every scenario given an allocation's and a game's events'
// price per 1M, and points Default and HTTPDefault at the defaults.
func (l *LifecycleResult) price(allocation, events float64) {
	l.Goal = LifeGoal
	for i := range l.Scenarios {
		sc := &l.Scenarios[i]
		if sc.Heartbeat.N == 0 {
			continue
		}
		sc.price(allocation, events)
		if sc.Default && sc.Endpoint == FunctionURL {
			l.Default = sc
		} else if sc.Default {
			l.HTTPDefault = sc
		}
	}
}

// at is the measured default scenario at endpoint e, nil if none.
func (l *LifecycleResult) at(e Endpoint) *LifecycleScenario {
	if e == FunctionURL {
		return l.Default
	}
	return l.HTTPDefault
}
