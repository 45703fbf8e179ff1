package gameliftapi

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// request is the allocation a placement asks of queue q: PlacementId as
// the gameInstanceId, q's version and timeout, and q's regions in the
// order GameLift would try them: the LocationOrder override first (and
// alone with PlacementFallbackStrategy NONE), else by the players'
// latencies, else q's order. Latencies to regions q does not have are
// left out (no queue places there); q's latency policies apply when
// players reported any.
func request(in StartInput, q Queue) (allocation.Request, error) {
	timeout := int(q.Timeout / time.Second)
	req := allocation.Request{GameInstanceID: in.PlacementID, GameServerVersion: q.GameServerVersion, QueueTimeoutSeconds: &timeout}
	inQueue := map[string]bool{}
	for _, r := range q.Regions {
		inQueue[r] = true
	}
	byPlayer := map[string]map[string]float64{}
	var players []string
	for _, l := range in.Latencies {
		r := region.Normalize(strings.TrimPrefix(strings.ToLower(l.Region), "custom-"))
		if !inQueue[r] {
			continue
		}
		if byPlayer[l.PlayerID] == nil {
			byPlayer[l.PlayerID] = map[string]float64{}
			players = append(players, l.PlayerID)
		}
		byPlayer[l.PlayerID][r] = l.LatencyMs
	}
	if len(players) > allocation.MaxPlayers {
		return req, invalid(fmt.Sprintf("PlayerLatencies may name at most %d players", allocation.MaxPlayers))
	}
	for _, p := range players {
		req.PlayerLatencies = append(req.PlayerLatencies, allocation.PlayerLatency{PlayerID: p, LatencyMs: byPlayer[p]})
	}
	if len(req.PlayerLatencies) > 0 {
		req.LatencyPolicies = q.LatencyPolicies
	}
	order, err := regionOrder(in, q, req.PlayerLatencies)
	req.PreferredRegions = order
	return req, err
}

// regionOrder is the order q's regions are tried in (see request).
func regionOrder(in StartInput, q Queue, players []allocation.PlayerLatency) ([]string, error) {
	var order []string
	switch {
	case len(in.LocationOrder) > 0:
		for _, l := range in.LocationOrder {
			r := region.Normalize(l)
			if !slices.Contains(q.Regions, r) {
				return nil, invalid(fmt.Sprintf("PriorityConfigurationOverride.LocationOrder names %q, which the queue does not place in (it has %s)",
					l, strings.Join(q.Regions, ", ")))
			}
			if !slices.Contains(order, r) {
				order = append(order, r)
			}
		}
		if in.FallbackStrategy == fallbackNone {
			return order, nil
		}
	case len(players) > 0:
		ranked, _ := allocation.RankRegions(players, 0)
		for _, r := range ranked {
			order = append(order, r.Region)
		}
	}
	for _, r := range q.Regions {
		if !slices.Contains(order, r) {
			order = append(order, r)
		}
	}
	return order, nil
}
