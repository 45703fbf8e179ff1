package eventcatalog

import (
	"fmt"
	"strconv"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// GameLiftQueuePlacement is the detail-type GameLift gives a game session
// queue's placement events; a GameLift placement's (shared/gameliftapi)
// ends with one, so a rule written for GameLift changes only its source.
const GameLiftQueuePlacement DetailType = "GameLift Queue Placement Event"

// The placement events' detail.type.
const (
	PlacementFulfilled = "PlacementFulfilled"
	PlacementCancelled = "PlacementCancelled"
	PlacementTimedOut  = "PlacementTimedOut"
	PlacementFailed    = "PlacementFailed"
)

// PlacementDetail is GameLift's queue placement event detail, with the
// idempotencyKey every event of ours carries.
type PlacementDetail struct {
	PlacementID string `json:"placementId"`
	// Port is a string, as GameLift's event has it.
	Port                 string                `json:"port,omitempty"`
	GameSessionArn       string                `json:"gameSessionArn,omitempty"`
	IPAddress            string                `json:"ipAddress,omitempty"`
	DNSName              string                `json:"dnsName,omitempty"`
	StartTime            string                `json:"startTime,omitempty"`
	EndTime              string                `json:"endTime,omitempty"`
	GameSessionRegion    string                `json:"gameSessionRegion,omitempty"`
	PlacedPlayerSessions []PlacedPlayerSession `json:"placedPlayerSessions,omitempty"`
	Type                 string                `json:"type"`
	IdempotencyKey       string                `json:"idempotencyKey"`
}

// PlacedPlayerSession is a player the placement seated.
type PlacedPlayerSession struct {
	PlayerID        string `json:"playerId"`
	PlayerSessionID string `json:"playerSessionId"`
}

// QueuePlacement is the placement event that follows e, an event of the
// GameLift placement p's instance, when e ends the placement: placed
// (GameServerAllocated, or the link that recorded a lost outcome:
// recovered) or failed (AllocationFailed, by its code). ok is false for
// any other event.
func QueuePlacement(p gameinstance.GameSessionPlacement, e Event, recovered bool) (ev Event, ok bool) {
	d := e.Instance
	if d == nil {
		return Event{}, false
	}
	out := PlacementDetail{PlacementID: d.GameInstanceID, StartTime: d.CreatedAt, EndTime: d.UpdatedAt}
	var failure *gameinstance.Failure
	if d.Error != nil {
		failure = &gameinstance.Failure{Code: d.Error.Code}
	}
	switch status := gameinstance.PlacementStatusOf(d.State, failure); {
	case e.Type == GameServerAllocated || e.Type == GameServerLinked && recovered:
		fulfilled(&out, p, d)
	case e.Type != AllocationFailed:
		return Event{}, false
	case status == gameinstance.PlacementTimedOut:
		out.Type = PlacementTimedOut
	case status == gameinstance.PlacementCancelled:
		out.Type = PlacementCancelled
	default:
		out.Type = PlacementFailed
	}
	out.IdempotencyKey = fmt.Sprintf("%s:%d:%s", d.GameInstanceID, d.Version, GameLiftQueuePlacement)
	var resources []string
	if p.QueueArn != "" {
		resources = []string{p.QueueArn}
	}
	return Event{Type: GameLiftQueuePlacement, Time: e.Time, Placement: &out, Resources: resources}, true
}

// fulfilled completes out for the placement p, placed as d says: where
// its players connect, and their sessions.
func fulfilled(out *PlacementDetail, p gameinstance.GameSessionPlacement, d *InstanceDetail) {
	out.Type, out.EndTime, out.GameSessionArn, out.GameSessionRegion = PlacementFulfilled, d.AllocatedAt, p.GameSessionArn, d.Region
	if out.EndTime == "" {
		out.EndTime = d.LinkedAt
	}
	ip, dns, port := gameinstance.Endpoint(d.Server)
	out.IPAddress, out.DNSName = ip, dns
	if port > 0 {
		out.Port = strconv.Itoa(port)
	}
	for _, s := range p.Session.DesiredPlayerSessions {
		out.PlacedPlayerSessions = append(out.PlacedPlayerSessions, PlacedPlayerSession{s.PlayerID, gameinstance.PlayerSessionID(d.GameInstanceID, s.PlayerID)})
	}
}
