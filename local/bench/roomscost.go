package bench

import (
	"cmp"
	"math"
	"slices"
	"time"
)

const (
	// RoomsGoal is issue 25's goal for a game's whole life on servers
	// holding RoomCapacity rooms, USD per 1M typicalGame games at the
	// default endpoint.
	RoomsGoal = 15.0
	// heartbeatsPerServer is how often the room games' sessions heartbeat
	// (their per-call figures only).
	heartbeatsPerServer = 5
)

// GameCost is one typicalGame's bill per 1M games, item by item: its
// allocation, its game server's link-back calls and its lifecycle events,
// logs apart as in the cost scenarios.
type GameCost struct {
	Allocation, Link, Heartbeats, End, Events float64
	Total                                     float64
}

func (g GameCost) summed() GameCost {
	g.Total = g.Allocation + g.Link + g.Heartbeats + g.End + g.Events
	return g
}

// lines names the items, for finding the largest.
func (g GameCost) lines() []CostLine {
	return []CostLine{{Item: "allocation", USD: g.Allocation}, {Item: "link", USD: g.Link}, {Item: "heartbeats", USD: g.Heartbeats},
		{Item: "end", USD: g.End}, {Item: "events", USD: g.Events}}
}

// RoomsAtEndpoint is a game's bill at one endpoint's default heartbeat
// interval, on a server of its own and on one holding RoomCapacity rooms.
type RoomsAtEndpoint struct {
	Endpoint          Endpoint
	Every             time.Duration
	Capacity          int // games a server holds: RoomCapacity
	Dedicated, Shared GameCost
	SharedRatio       float64 // Shared.Total ÷ Dedicated.Total
	// Met is Shared.Total ≤ RoomsGoal; else MissedBy and Top, the
	// largest item of Shared.
	Met      bool
	MissedBy float64
	Top      CostLine
	// Game is the dedicated game's scenario, for what dominates it.
	Game *LifecycleScenario
}

// DedicatedGame is a game on a server of its own, from the scenario's
// measured whole game: its allocation, link, heartbeats, end and events
// as sc priced them.
func DedicatedGame(sc LifecycleScenario) GameCost {
	return GameCost{Allocation: sc.Allocation, Link: sc.Link.At(sc.Endpoint), End: sc.End.At(sc.Endpoint), Events: sc.Events,
		Heartbeats: sc.Heartbeats * sc.Heartbeat.At(sc.Endpoint)}.summed()
}

// SharedGame is one of the capacity games a server holds over its life,
// the server's own costs shared by them: the first game came with the
// server, allocated by the Allocator (allocation per 1M) and linking with
// the rooms offer, with a dedicated game's events (dedicatedEvents); the
// other capacity−1 were placed in its rooms (placement each), link as
// sessions and have roomEvents each; the server closes its rooms once
// before it stops. Every game heartbeats as a dedicated one does at e
// (heartbeats per 1M games, measured over whole games) and ends giving its
// room back; the link-back calls pay e's charge.
func SharedGame(capacity int, e Endpoint, allocation, placement, heartbeats float64, g RoomGames, dedicatedEvents, roomEvents float64) GameCost {
	c := float64(max(capacity, 1))
	others := c - 1
	return GameCost{
		Allocation: (allocation + others*placement) / c,
		Link:       (g.Offer.At(e) + others*g.SessionLink.At(e) + g.Close.At(e)) / c,
		End:        g.End.At(e),
		Events:     (dedicatedEvents + others*roomEvents) / c,
		Heartbeats: heartbeats,
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

// price fills in the per-game bills at each endpoint's default from the
// other phases' figures: the first cost scenario's allocation, and the
// dedicated games measured whole and priced (l.price first).
func (r *RoomsResult) price(m CostModel, l *LifecycleResult, dedicatedEvents float64) {
	r.ByEndpoint = nil
	if r.Games.Placement.N == 0 || len(m.Scenarios) == 0 {
		return
	}
	sc := m.Scenarios[0]
	r.PlacementUSD = RoomPlacementUSD(sc, m.Inputs, r.Games.Placement)
	for _, e := range []Endpoint{FunctionURL, HTTPAPI} {
		d := l.at(e)
		if d == nil {
			continue
		}
		a := RoomsAtEndpoint{Endpoint: e, Every: d.Every, Capacity: RoomCapacity, Dedicated: DedicatedGame(*d), Game: d}
		a.Shared = SharedGame(RoomCapacity, e, sc.Total, r.PlacementUSD, a.Dedicated.Heartbeats, r.Games, dedicatedEvents, r.Events.PerGame)
		a.SharedRatio = a.Shared.Total / a.Dedicated.Total
		a.Met, a.MissedBy = a.Shared.Total <= RoomsGoal, math.Max(0, a.Shared.Total-RoomsGoal)
		a.Top = slices.MaxFunc(a.Shared.lines(), func(x, y CostLine) int { return cmp.Compare(x.USD, y.USD) })
		a.Top.Share = a.Top.USD / a.Shared.Total
		r.ByEndpoint = append(r.ByEndpoint, a)
	}
	r.Goal = RoomsGoal
}
