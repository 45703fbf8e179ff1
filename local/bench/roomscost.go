package bench

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
)

// GameCost is one typicalGame's bill per 1M games, item by item: its
// allocation, its game server's link-back calls and its lifecycle events,
// logs apart as in the cost scenarios.
type GameCost struct {
	Allocation, Link, End, Events float64
	// Heartbeats every HeartbeatEvery, and every HEALTH_PERIOD.
	Heartbeats, HeartbeatsAt30s float64
	Total, TotalAt30s           float64
}

func (g GameCost) summed() GameCost {
	rest := g.Allocation + g.Link + g.End + g.Events
	g.Total, g.TotalAt30s = rest+g.Heartbeats, rest+g.HeartbeatsAt30s
	return g
}

// DedicatedGame is a game on a server of its own: the Allocator's
// allocation (allocation per 1M), the measured link, heartbeats and end
// (lifecycle.go), and events per game.
func DedicatedGame(allocation float64, l LifecycleResult, events float64, step time.Duration) GameCost {
	return GameCost{Allocation: allocation, Link: l.Link.USDPerMillion, End: l.End.USDPerMillion, Events: events,
		Heartbeats:      heartbeatsFor(l.Heartbeat, HeartbeatEvery, step, typicalGame),
		HeartbeatsAt30s: heartbeatsFor(l.Heartbeat, lifecycle.DefaultPolicy.Period, step, typicalGame)}.summed()
}

// SharedGame is one of the capacity games a server holds over its life,
// the server's own costs shared by them: the first game came with the
// server, allocated by the Allocator (allocation per 1M) and linking with
// the rooms offer, with a dedicated game's events (dedicatedEvents); the
// other capacity−1 were placed in its rooms (placement each), link as
// sessions and have roomEvents each; the server closes its rooms once
// before it stops. Every game heartbeats as a dedicated one does and ends
// giving its room back.
func SharedGame(capacity int, allocation, placement float64, g RoomGames, dedicatedEvents, roomEvents float64, step time.Duration) GameCost {
	c := float64(max(capacity, 1))
	others := c - 1
	return GameCost{
		Allocation:      (allocation + others*placement) / c,
		Link:            (g.Offer.USDPerMillion + others*g.SessionLink.USDPerMillion + g.Close.USDPerMillion) / c,
		End:             g.End.USDPerMillion,
		Events:          (dedicatedEvents + others*roomEvents) / c,
		Heartbeats:      heartbeatsFor(g.Heartbeat, HeartbeatEvery, step, typicalGame),
		HeartbeatsAt30s: heartbeatsFor(g.Heartbeat, lifecycle.DefaultPolicy.Period, step, typicalGame),
	}.summed()
}

// RoomPlacementUSD prices a room placement per 1M as sc prices an
// allocation: an HTTP API and a Lambda request, the placement's billed
// duration and DynamoDB units as measured, and sc's amortised region-health
// reads (in.HealthReadRRU each) and Secrets Manager calls, which a
// placement makes as an allocation does. The session callback is inside
// the billed duration; it costs nothing else on AWS.
func RoomPlacementUSD(sc Scenario, in CostInputs, p RoomPlacement) float64 {
	return prices.HTTPAPI + prices.LambdaRequests + p.BilledMs*lambdaUSDPerMs +
		p.ReadUnits*prices.DynamoRRU + p.WriteUnits*prices.DynamoWRU +
		sc.HealthReads*in.HealthReadRRU*prices.DynamoRRU + sc.SecretsCalls*prices.SecretsPer10k/1e4*1e6
}

// price fills in the per-game bills from the other phases' figures: the
// first cost scenario's allocation, the dedicated games' calls and events.
func (r *RoomsResult) price(m CostModel, l LifecycleResult, dedicatedEvents float64) {
	if r.Games.Placement.N == 0 || len(m.Scenarios) == 0 || l.Heartbeat.N == 0 {
		return
	}
	step := lifecycle.DefaultPolicy.IndexStep()
	sc := m.Scenarios[0]
	r.PlacementUSD = RoomPlacementUSD(sc, m.Inputs, r.Games.Placement)
	r.Dedicated = DedicatedGame(sc.Total, l, dedicatedEvents, step)
	r.Shared = SharedGame(RoomCapacity, sc.Total, r.PlacementUSD, r.Games, dedicatedEvents, r.Events.PerGame, step)
	r.SharedRatio = r.Shared.Total / r.Dedicated.Total
}
