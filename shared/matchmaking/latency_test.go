package matchmaking

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// fakeTickets answers Latencies from players (by ticket id), records each
// call's ids, fails the call numbered failOn (1-based) and, with block,
// waits for the context to end instead of answering.
type fakeTickets struct {
	mu      sync.Mutex
	players map[string][]allocation.PlayerLatency
	calls   [][]string
	failOn  int
	block   bool
}

func (f *fakeTickets) Latencies(ctx context.Context, ids []string) ([]allocation.PlayerLatency, error) {
	f.mu.Lock()
	f.calls = append(f.calls, append([]string(nil), ids...))
	n := len(f.calls)
	f.mu.Unlock()
	if f.block {
		// A slow GameLift; past 5s the caller did not bound the wait.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Second):
			return nil, errors.New("the caller's context never ended")
		}
	}
	if n == f.failOn {
		return nil, errors.New("ThrottlingException: rate exceeded")
	}
	var out []allocation.PlayerLatency
	for _, id := range ids {
		out = append(out, f.players[id]...)
	}
	return out, nil
}

func (f *fakeTickets) callSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var sizes []int
	for _, c := range f.calls {
		sizes = append(sizes, len(c))
	}
	return sizes
}

// ticketsOf is n tickets of one player each, every player 40 ms from eu
// and 90 ms from custom-us-west.
func ticketsOf(n int) ([]string, *fakeTickets) {
	f := &fakeTickets{players: map[string][]allocation.PlayerLatency{}}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("t-%d", i)
		ids = append(ids, id)
		f.players[id] = []allocation.PlayerLatency{{PlayerID: fmt.Sprintf("p-%d", i), LatencyMs: map[string]float64{"eu": 40, "custom-us-west": 90}}}
	}
	return ids, f
}

func TestLatenciesTenTicketsACall(t *testing.T) {
	for _, tc := range []struct {
		tickets int
		calls   []int
	}{
		{1, []int{1}},
		{10, []int{10}},
		{11, []int{10, 1}},
		{23, []int{10, 10, 3}},
		{200, []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}},
	} {
		t.Run(fmt.Sprint(tc.tickets), func(t *testing.T) {
			ids, f := ticketsOf(tc.tickets)
			got, err := latencies(context.Background(), f, ids)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.callSizes(), tc.calls) {
				t.Fatalf("calls of %v tickets, want %v", f.callSizes(), tc.calls)
			}
			var asked []string
			for _, c := range f.calls {
				asked = append(asked, c...)
			}
			if !reflect.DeepEqual(asked, ids) {
				t.Fatalf("asked %v, want every ticket once, in order", asked)
			}
			if len(got) != tc.tickets || got[len(got)-1].PlayerID != fmt.Sprintf("p-%d", tc.tickets-1) {
				t.Fatalf("%d players, want %d", len(got), tc.tickets)
			}
		})
	}
}

func TestLatenciesAnyFailureGivesNone(t *testing.T) {
	for _, failOn := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("call %d of 3", failOn), func(t *testing.T) {
			ids, f := ticketsOf(23)
			f.failOn = failOn
			got, err := latencies(context.Background(), f, ids)
			if err == nil || got != nil {
				t.Fatalf("players %v, err %v; want none and the error", got, err)
			}
			if len(f.calls) != failOn {
				t.Fatalf("%d calls, want none after the failure", len(f.calls))
			}
		})
	}
}

var testDefaults = allocation.Defaults{Request: defaults.Request{Region: "eu", Environment: "prod", ArmadaSet: "arena", MaxAttempts: defaults.MaxAllocationAttempts}}

func TestUsable(t *testing.T) {
	many := func(n int, from float64) map[string]float64 {
		m := map[string]float64{}
		for i := range n {
			m[fmt.Sprintf("r%02d", i)] = from + float64(n-i) // r00 the farthest
		}
		return m
	}
	lowest50 := map[string]float64{}
	for i := 10; i < 60; i++ {
		lowest50[fmt.Sprintf("r%02d", i)] = 100 + float64(60-i)
	}
	for _, tc := range []struct {
		name string
		in   []allocation.PlayerLatency
		want []allocation.PlayerLatency
	}{
		{"custom- regions are kept for the ranking",
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"custom-eu-central-1": 40, "US-West": 90}}},
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"custom-eu-central-1": 40, "US-West": 90}}}},
		{"invalid region names are dropped",
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"eu": 40, "us west": 10, "": 10, "custom-": 10, "-eu": 10, "eu/1": 10, "custom-" + strings.Repeat("a", 65): 10}}},
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"eu": 40}}}},
		{"latencies outside 0-60000 ms are dropped",
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"a": -1, "b": 0, "c": 60000, "d": 60001, "e": math.NaN(), "f": math.Inf(1)}}},
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"b": 0, "c": 60000}}}},
		{"a player without a usable latency is left out",
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"bad region": 10}}, {PlayerID: "p2"}, {PlayerID: "p3", LatencyMs: map[string]float64{"eu": 5}}},
			[]allocation.PlayerLatency{{PlayerID: "p3", LatencyMs: map[string]float64{"eu": 5}}}},
		{"more than 50 regions keep the 50 lowest",
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: many(60, 100)}},
			[]allocation.PlayerLatency{{PlayerID: "p1", LatencyMs: lowest50}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := usable(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("usable:\n%v\nwant:\n%v", got, tc.want)
			}
			// What usable keeps, the allocation request accepts.
			if _, err := testDefaults.Resolve(allocation.Request{GameInstanceID: "m-1", PlayerLatencies: got}); err != nil {
				t.Fatalf("the request refuses what usable kept: %v", err)
			}
		})
	}
}

func TestUsableCapsThePlayers(t *testing.T) {
	var in []allocation.PlayerLatency
	in = append(in, allocation.PlayerLatency{PlayerID: "no-latency"})
	for i := range allocation.MaxPlayers + 5 {
		in = append(in, allocation.PlayerLatency{PlayerID: fmt.Sprintf("p-%d", i), LatencyMs: map[string]float64{"eu": 40}})
	}
	got := usable(in)
	if len(got) != allocation.MaxPlayers || got[0].PlayerID != "p-0" || got[len(got)-1].PlayerID != fmt.Sprintf("p-%d", allocation.MaxPlayers-1) {
		t.Fatalf("%d players (%s..%s), want the first %d with latencies", len(got), got[0].PlayerID, got[len(got)-1].PlayerID, allocation.MaxPlayers)
	}
	if _, err := testDefaults.Resolve(allocation.Request{GameInstanceID: "m-1", PlayerLatencies: got}); err != nil {
		t.Fatalf("the request refuses what usable kept: %v", err)
	}
}
