package gameliftapi

import (
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// GameSessionArn is a placement's game session ARN (and GameSessionId), in
// GameLift's form: arn:aws:gamelift:<region>::gamesession/<fleet>/<id>.
// GameFabric has no fleet ids; its game sessions are all in one fleet.
func GameSessionArn(region, placementID string) string {
	return fmt.Sprintf("arn:aws:gamelift:%s::gamesession/%s/%s", region, Fleet, placementID)
}

// Fleet stands for GameLift's fleet id in game session ARNs.
const Fleet = "fleet-gamefabric"

// view is the GameSessionPlacement of rec, with what kept holds of its
// inputs (nil when it was not found).
func view(rec gameinstance.Record, kept *gameinstance.GameSessionPlacement) obj {
	status := gameinstance.PlacementStatus(rec)
	o := obj{{"PlacementId", rec.GameInstanceID}}
	add := func(name string, v any) { o = append(o, member{name, v}) }
	if kept != nil {
		add("GameSessionQueueName", kept.QueueName)
	}
	add("Status", status)
	if kept != nil {
		if len(kept.Session.Properties) > 0 {
			add("GameProperties", properties(kept.Session.Properties))
		}
		if n := kept.Session.MaximumPlayerSessionCount; n != nil {
			add("MaximumPlayerSessionCount", int64(*n))
		}
		if kept.Session.Name != "" {
			add("GameSessionName", kept.Session.Name)
		}
	}
	fulfilled := status == gameinstance.PlacementFulfilled
	if fulfilled && kept != nil {
		add("GameSessionId", kept.GameSessionArn)
		add("GameSessionArn", kept.GameSessionArn)
	}
	if fulfilled && rec.Region != "" {
		add("GameSessionRegion", rec.Region)
	}
	if kept != nil && len(kept.Latencies) > 0 {
		add("PlayerLatencies", latencies(kept.Latencies))
	}
	if !rec.CreatedAt.IsZero() {
		add("StartTime", rec.CreatedAt)
	}
	if end := gameinstance.PlacementEnded(rec); !end.IsZero() {
		add("EndTime", end)
	}
	if ip, dns, port := gameinstance.Endpoint(rec.Server); fulfilled && ip != "" {
		add("IpAddress", ip)
		add("DnsName", dns)
		if port > 0 {
			add("Port", int64(port))
		}
	}
	if fulfilled && kept != nil && len(kept.Session.DesiredPlayerSessions) > 0 {
		add("PlacedPlayerSessions", placed(rec.GameInstanceID, kept.Session.DesiredPlayerSessions))
	}
	if kept != nil && kept.Session.Data != "" {
		add("GameSessionData", kept.Session.Data)
	}
	if kept != nil && len(kept.LocationOrder) > 0 {
		add("PriorityConfigurationOverride", priority(kept))
	}
	return o
}

func properties(ps []gameinstance.GameProperty) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = obj{{"Key", p.Key}, {"Value", p.Value}}
	}
	return out
}

func latencies(ls []gameinstance.RegionLatency) []any {
	out := make([]any, len(ls))
	for i, l := range ls {
		out[i] = obj{{"PlayerId", l.PlayerID}, {"RegionIdentifier", l.Region}, {"LatencyInMilliseconds", float32(l.LatencyMs)}}
	}
	return out
}

func placed(id string, players []gameinstance.PlayerSession) []any {
	out := make([]any, len(players))
	for i, p := range players {
		out[i] = obj{{"PlayerId", p.PlayerID}, {"PlayerSessionId", gameinstance.PlayerSessionID(id, p.PlayerID)}}
	}
	return out
}

func priority(kept *gameinstance.GameSessionPlacement) obj {
	order := make([]any, len(kept.LocationOrder))
	for i, l := range kept.LocationOrder {
		order[i] = l
	}
	o := obj{{"LocationOrder", order}}
	if kept.FallbackStrategy != "" {
		o = append(o, member{"PlacementFallbackStrategy", kept.FallbackStrategy})
	}
	return o
}
