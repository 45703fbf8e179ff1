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
// session's link, a dedicated game's heartbeats, its own end, and a
// quarter of a dedicated game's events plus three quarters of a
// session's; behind the HTTP API each link-back call pays its charge.
func TestSharedGame(t *testing.T) {
	g := RoomGames{Offer: LifecycleCall{USDPerMillion: 8}, SessionLink: LifecycleCall{USDPerMillion: 4}, Close: LifecycleCall{USDPerMillion: 2},
		End: LifecycleCall{USDPerMillion: 5}, Heartbeat: LifecycleCall{USDPerMillion: 2}}
	for _, tt := range []struct {
		e   Endpoint
		per float64 // the endpoint's charge per call
	}{{FunctionURL, 0}, {HTTPAPI, 1}} {
		got := SharedGame(4, tt.e, 3, 7, 50, 0.6, g, 4, 8)
		want := GameCost{Allocation: (3 + 3*7) / 4.0, Link: (8 + 3*4 + 2 + 5*tt.per) / 4.0, End: 5 + tt.per, Events: (4 + 3*8) / 4.0, Heartbeats: 50, Sweep: 0.6}
		want.Total = want.Allocation + want.Link + want.End + want.Events + want.Heartbeats + want.Sweep
		for _, c := range []struct {
			item      string
			got, want float64
		}{{"allocation", got.Allocation, want.Allocation}, {"link", got.Link, want.Link}, {"end", got.End, want.End},
			{"events", got.Events, want.Events}, {"heartbeats", got.Heartbeats, want.Heartbeats}, {"total", got.Total, want.Total}} {
			if !near(c.got, c.want) {
				t.Errorf("%s %s: $%.4f, want $%.4f", tt.e, c.item, c.got, c.want)
			}
		}
	}
	// A capacity of one is a dedicated server: nothing is shared.
	if one := SharedGame(1, FunctionURL, 3, 7, 50, 0.6, g, 4, 8); !near(one.Allocation, 3) || !near(one.Events, 4) || !near(one.Link, 10) {
		t.Errorf("capacity 1: %+v", one)
	}
}

// A dedicated game is the scenario's measured whole game as priced.
func TestDedicatedGame(t *testing.T) {
	sc := measuredGame(HTTPAPI, 10*time.Second, 0.5, 0.1)
	sc.price(3.25, 4.5, 0.6)
	if g := DedicatedGame(sc); !near(g.Total, sc.WholeLife) || !near(g.Heartbeats, 40*sc.Heartbeat.At(HTTPAPI)) {
		t.Errorf("dedicated $%.4f (heartbeats $%.4f), scenario's whole life $%.4f", g.Total, g.Heartbeats, sc.WholeLife)
	}
}

// The rooms are priced only once every phase they draw on has run, at
// each endpoint's default, against the goal.
func TestRoomsPriceNeedsItsPhases(t *testing.T) {
	m := NewCostModel(CostInputs{BilledMs: 30, WRU: 3, IndexWRU: 1, HealthReadRRU: 2})
	l := LifecycleResult{Scenarios: []LifecycleScenario{measuredGame(FunctionURL, 30*time.Second, 0, 1), measuredGame(HTTPAPI, 10*time.Second, 0.5, 0.1)}}
	l.price(m.Scenarios[0].Total, 4.5, 0.6)
	var none RoomsResult
	none.price(m, &l, 4.5)
	if len(none.ByEndpoint) != 0 || none.PlacementUSD != 0 {
		t.Errorf("priced without placements: %+v", none)
	}
	r := RoomsResult{Games: RoomGames{Placement: RoomPlacement{Phase: Phase{N: 24}, BilledMs: 7, WriteUnits: 11},
		Heartbeat: LifecycleCall{N: 120, USDPerMillion: 2}}}
	r.price(m, &l, 4.5)
	if len(r.ByEndpoint) != 2 || r.ByEndpoint[0].Endpoint != FunctionURL || r.ByEndpoint[1].Every != 10*time.Second {
		t.Fatalf("priced %+v", r.ByEndpoint)
	}
	for _, a := range r.ByEndpoint {
		if a.Dedicated.Allocation != m.Scenarios[0].Total || a.Shared.Total == 0 || !near(a.SharedRatio, a.Shared.Total/a.Dedicated.Total) ||
			a.Met != (a.Shared.Total < a.Dedicated.Total) || a.Top.USD < a.Shared.Heartbeats || !near(a.Shared.Sweep, 0.6) {
			t.Errorf("priced %+v", a)
		}
	}
}
