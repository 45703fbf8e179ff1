package bench

import (
	"math"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A placement is priced as an allocation is, with its own duration and
// units: checked by hand.
func TestRoomPlacementUSD(t *testing.T) {
	sc := Scenario{HealthReads: 0.5, SecretsCalls: 0.01}
	p := RoomPlacement{BilledMs: 7, ReadUnits: 0.5, WriteUnits: 11}
	want := 1.00 + 0.20 + 7*0.125*prices.LambdaGBSecond*1000 + // HTTP API, Lambda request, 7 ms at 128 MB
		0.5*0.125 + 11*0.625 + // the query's read units, the write units
		0.5*2*0.125 + 0.01*0.05*100 // half a health read of 2 units, a hundredth of a Secrets Manager call
	if got := RoomPlacementUSD(sc, CostInputs{HealthReadRRU: 2}, p); !near(got, want) {
		t.Errorf("$%.6f per 1M placements, want $%.6f", got, want)
	}
}

// One of four games on a shared server pays a quarter of the server's own
// allocation, link and close, three quarters of a placement and of a
// session's link, its own heartbeats and end, and a quarter of a dedicated
// game's events plus three quarters of a session's.
func TestSharedGame(t *testing.T) {
	g := RoomGames{Offer: LifecycleCall{USDPerMillion: 8}, SessionLink: LifecycleCall{USDPerMillion: 4}, Close: LifecycleCall{USDPerMillion: 2},
		End: LifecycleCall{USDPerMillion: 5}, Heartbeat: LifecycleCall{USDPerMillion: 2}}
	got := SharedGame(4, 3, 7, g, 4, 8, time.Minute)
	want := GameCost{Allocation: (3 + 3*7) / 4.0, Link: (8 + 3*4 + 2) / 4.0, End: 5, Events: (4 + 3*8) / 4.0,
		// 120 or 40 heartbeats at $2, and 20 index moves (one a minute) of 2 write units.
		Heartbeats: 120*2 + 20*2*prices.DynamoWRU, HeartbeatsAt30s: 40*2 + 20*2*prices.DynamoWRU}
	want.Total = want.Allocation + want.Link + want.End + want.Events + want.Heartbeats
	want.TotalAt30s = want.Total - want.Heartbeats + want.HeartbeatsAt30s
	for _, c := range []struct {
		item      string
		got, want float64
	}{{"allocation", got.Allocation, want.Allocation}, {"link", got.Link, want.Link}, {"end", got.End, want.End},
		{"events", got.Events, want.Events}, {"heartbeats", got.Heartbeats, want.Heartbeats}, {"heartbeats at 30 s", got.HeartbeatsAt30s, want.HeartbeatsAt30s},
		{"total", got.Total, want.Total}, {"total at 30 s", got.TotalAt30s, want.TotalAt30s}} {
		if !near(c.got, c.want) {
			t.Errorf("%s: $%.4f, want $%.4f", c.item, c.got, c.want)
		}
	}
	// A capacity of one is a dedicated server: nothing is shared.
	if one := SharedGame(1, 3, 7, g, 4, 8, time.Minute); !near(one.Allocation, 3) || !near(one.Events, 4) || !near(one.Link, 10) {
		t.Errorf("capacity 1: %+v", one)
	}
}

// A dedicated game is its allocation, perGame's calls and its events.
func TestDedicatedGame(t *testing.T) {
	l := LifecycleResult{Link: LifecycleCall{USDPerMillion: 3}, End: LifecycleCall{USDPerMillion: 2},
		Heartbeat: LifecycleCall{USDPerMillion: 2 + 0.5*prices.DynamoWRU, IndexWrites: 0.5}}
	g := DedicatedGame(3.25, l, 4.5, time.Minute)
	if want := 3.25 + perGame(l, HeartbeatEvery, time.Minute) + 4.5; !near(g.Total, want) {
		t.Errorf("total $%.4f, want $%.4f", g.Total, want)
	}
	if want := 3.25 + perGame(l, 30*time.Second, time.Minute) + 4.5; !near(g.TotalAt30s, want) {
		t.Errorf("total at 30 s $%.4f, want $%.4f", g.TotalAt30s, want)
	}
}

// The rooms are priced only once every phase they draw on has run.
func TestRoomsPriceNeedsItsPhases(t *testing.T) {
	m := NewCostModel(CostInputs{BilledMs: 30, WRU: 3, IndexWRU: 1, HealthReadRRU: 2})
	l := LifecycleResult{Heartbeat: LifecycleCall{N: 100, USDPerMillion: 2}}
	var none RoomsResult
	none.price(m, l, 4.5)
	if none.Shared.Total != 0 || none.PlacementUSD != 0 {
		t.Errorf("priced without placements: %+v", none)
	}
	r := RoomsResult{Games: RoomGames{Placement: RoomPlacement{Phase: Phase{N: 24}, BilledMs: 7, WriteUnits: 11},
		Heartbeat: LifecycleCall{N: 120, USDPerMillion: 2}}}
	r.price(m, l, 4.5)
	if r.Dedicated.Allocation != m.Scenarios[0].Total || r.Shared.Total == 0 || !near(r.SharedRatio, r.Shared.Total/r.Dedicated.Total) {
		t.Errorf("priced %+v", r)
	}
}
