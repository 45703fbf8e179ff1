package matchmaking

import (
	"context"
	"fmt"
	"sort"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

// Tickets reads matchmaking tickets: GameLift's DescribeMatchmaking,
// behind an adapter (shared/gamelifttickets).
type Tickets interface {
	// Latencies returns the players' LatencyInMs of the tickets ids (at
	// most TicketsPerCall of them); a ticket that no longer exists is
	// left out, as DescribeMatchmaking leaves it out.
	Latencies(ctx context.Context, ids []string) ([]allocation.PlayerLatency, error)
}

// TicketsPerCall is DescribeMatchmaking's limit on TicketIds.
const TicketsPerCall = 10

// latencies reads the players' latencies of every ticket, TicketsPerCall
// at a time, all inside ctx. Any failure gives none at all: a region
// chosen from some of the players would be chosen for the wrong ones.
func latencies(ctx context.Context, t Tickets, ids []string) ([]allocation.PlayerLatency, error) {
	var players []allocation.PlayerLatency
	for start := 0; start < len(ids); start += TicketsPerCall {
		got, err := t.Latencies(ctx, ids[start:min(start+TicketsPerCall, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("describe matchmaking tickets %d-%d of %d: %w", start+1, min(start+TicketsPerCall, len(ids)), len(ids), err)
		}
		players = append(players, got...)
	}
	return usable(players), nil
}

// usable keeps what the allocation request accepts of what GameLift said:
// valid region names (a "custom-" prefix is the ranking's to strip) and
// 0-60 s latencies, at most the closest MaxLatencyRegions regions a player,
// players with at least one, and at most MaxPlayers of them. A client's
// odd ping must not fail the match.
func usable(players []allocation.PlayerLatency) []allocation.PlayerLatency {
	out := make([]allocation.PlayerLatency, 0, len(players))
	for _, p := range players {
		type reading struct {
			region string
			ms     float64
		}
		var rs []reading
		for r, ms := range p.LatencyMs {
			if allocation.ValidLatency(r, ms) {
				rs = append(rs, reading{r, ms})
			}
		}
		if len(rs) == 0 || len(out) == allocation.MaxPlayers {
			continue
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].ms < rs[j].ms || rs[i].ms == rs[j].ms && rs[i].region < rs[j].region })
		kept := allocation.PlayerLatency{PlayerID: p.PlayerID, LatencyMs: map[string]float64{}}
		for _, r := range rs[:min(len(rs), allocation.MaxLatencyRegions)] {
			kept.LatencyMs[r.region] = r.ms
		}
		out = append(out, kept)
	}
	return out
}
