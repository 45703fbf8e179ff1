// Package gamelifttickets reads FlexMatch tickets through GameLift's
// DescribeMatchmaking: the adapter behind matchmaking.Tickets.
package gamelifttickets

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

// API is the part of the GameLift client the adapter uses.
type API interface {
	DescribeMatchmaking(ctx context.Context, in *gamelift.DescribeMatchmakingInput, opts ...func(*gamelift.Options)) (*gamelift.DescribeMatchmakingOutput, error)
}

var _ API = (*gamelift.Client)(nil)

// Tickets reads tickets through API.
type Tickets struct{ API API }

// Latencies returns every player's LatencyInMs of the tickets ids. A
// player without latencies is left out; the caller bounds the time (the
// SDK retries throttling within it).
func (t Tickets) Latencies(ctx context.Context, ids []string) ([]allocation.PlayerLatency, error) {
	out, err := t.API.DescribeMatchmaking(ctx, &gamelift.DescribeMatchmakingInput{TicketIds: ids})
	if err != nil {
		return nil, fmt.Errorf("gamelift DescribeMatchmaking: %w", err)
	}
	var players []allocation.PlayerLatency
	for _, tk := range out.TicketList {
		for _, p := range tk.Players {
			if len(p.LatencyInMs) == 0 {
				continue
			}
			pl := allocation.PlayerLatency{LatencyMs: make(map[string]float64, len(p.LatencyInMs))}
			if p.PlayerId != nil {
				pl.PlayerID = *p.PlayerId
			}
			for region, ms := range p.LatencyInMs {
				pl.LatencyMs[region] = float64(ms)
			}
			players = append(players, pl)
		}
	}
	return players, nil
}
