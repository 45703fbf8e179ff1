package eventcatalog

import (
	"fmt"
	"unicode/utf8"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// InstanceDetail is the detail of every game-instance event. Its fields
// are those of GET /v1/allocations/{id}, plus the transition (state,
// previousState), the record version and the idempotency key. Token
// hashes, claim ids and upstream response bodies are never in it.
//
// Its parts are the API's own shapes (apishape: Server, Attempt, Failure,
// LinkInfo), but the detail itself is not apishape.Allocation: it was
// published flat before that existed (docs/events.md), with the relaxed
// latency filter as latencyRelaxed, the times as strings interleaved with
// allocatedAt, and the lifecycle fields in their own order. A test holds
// it to every field of apishape.Allocation, so a field added there is
// added here too.
type InstanceDetail struct {
	// IdempotencyKey is "<gameInstanceId>:<version>:<detail-type>".
	IdempotencyKey string `json:"idempotencyKey"`
	GameInstanceID string `json:"gameInstanceId"`
	// Version is the stored record's version: it grows with every write.
	Version           int64              `json:"version"`
	State             gameinstance.State `json:"state"`
	PreviousState     gameinstance.State `json:"previousState,omitempty"`
	Region            string             `json:"region,omitempty"`
	DesiredRegion     string             `json:"desiredRegion,omitempty"`
	GameServerVersion string             `json:"gameServerVersion,omitempty"`
	Environment       string             `json:"environment,omitempty"`
	ArmadaSet         string             `json:"armadaSet,omitempty"`
	Server            *apishape.Server   `json:"server,omitempty"`
	// Placement is how Server was found: "room" (a free room on a game
	// server hosting other sessions) or "allocator"; absent without one.
	Placement      gameinstance.Placement `json:"placement,omitempty"`
	FallbackUsed   bool                   `json:"fallbackUsed"`
	LatencyRelaxed bool                   `json:"latencyRelaxed,omitempty"`
	// Attempts is the decision trace: each region tried or skipped, and
	// why, as recorded (without the upstream's response body).
	Attempts []apishape.Attempt `json:"attempts"`
	Error    *apishape.Failure  `json:"error,omitempty"`
	// SuspectedOrphans: in SuspectedOrphan events, the attempts that may
	// have left a server allocated upstream.
	SuspectedOrphans []apishape.Attempt `json:"suspectedOrphans,omitempty"`
	RecoveredByLink  bool               `json:"recoveredByLink,omitempty"`
	LinkedServer     *apishape.LinkInfo `json:"linkedServer,omitempty"`
	EndReason        string             `json:"endReason,omitempty"`
	UnhealthyReason  string             `json:"unhealthyReason,omitempty"`
	CreatedAt        string             `json:"createdAt,omitempty"`
	UpdatedAt        string             `json:"updatedAt,omitempty"`
	// AllocatedAt is when the outcome Allocated was stored; set when this
	// change is that write or the one right after it (link, link timeout).
	AllocatedAt     string `json:"allocatedAt,omitempty"`
	LinkedAt        string `json:"linkedAt,omitempty"`
	LastHeartbeatAt string `json:"lastHeartbeatAt,omitempty"`
	EndedAt         string `json:"endedAt,omitempty"`
	UnhealthyAt     string `json:"unhealthyAt,omitempty"`
	// QueuedUntil: the placement was queued, to be placed by then.
	QueuedUntil string `json:"queuedUntil,omitempty"`
	// MatchID is set on a FlexMatch match's instance (its id); on
	// GameServerAllocated and AllocationFailed (and the GameServerLinked of
	// an allocation recovered by its server's link), TicketIDs are the
	// match's tickets, so a game service can tell their players.
	MatchID   string   `json:"matchId,omitempty"`
	TicketIDs []string `json:"ticketIds,omitempty"`
	// PlacementID is set on a GameLift placement's instance (its id).
	PlacementID string `json:"placementId,omitempty"`
}

// MaxTextBytes bounds each free-text field copied from a record (attempt
// errors, failure messages), so an event stays far below EventBridge's
// 256 KB entry limit whatever an upstream said.
const MaxTextBytes = 1024

// stateEvents is the event a record's arrival in a state produces. States
// not listed (Allocating: a claim) produce none.
var stateEvents = map[gameinstance.State]DetailType{
	gameinstance.StateQueued:    AllocationQueued,
	gameinstance.StateAllocated: GameServerAllocated,
	gameinstance.StateFailed:    AllocationFailed,
	gameinstance.StateLinked:    GameServerLinked,
	gameinstance.StateEnded:     GameInstanceEnded,
	gameinstance.StateUnhealthy: GameInstanceUnhealthy,
}

// FromGameInstance returns the events of one stored write: old is the
// record before it (nil when the write created it), cur the record after.
// A write that leaves the state as it was (a heartbeat, a claim takeover)
// produces nothing. An outcome write whose attempts include suspected
// orphans also produces a SuspectedOrphan event.
func FromGameInstance(old *gameinstance.Record, cur gameinstance.Record) []Event {
	var prev gameinstance.State
	if old != nil {
		prev = old.State
	}
	typ, ok := stateEvents[cur.State]
	if prev == cur.State || !ok {
		return nil
	}
	if typ == AllocationQueued && old != nil && old.Queue != nil {
		// Queued again after one more attempt: announced once, when first queued.
		return nil
	}
	d := instanceDetail(old, cur)
	evs := []Event{instanceEvent(typ, cur, d)}
	if typ == GameServerLinked && prev == gameinstance.StateAllocated && !cur.LinkedAt.Before(old.UpdatedAt) {
		evs[0].LinkTime = cur.LinkedAt.Sub(old.UpdatedAt)
	}
	if cur.State != gameinstance.StateAllocated && cur.State != gameinstance.StateFailed {
		return evs
	}
	for _, a := range d.Attempts {
		if a.SuspectedOrphan {
			d.SuspectedOrphans = append(d.SuspectedOrphans, a)
		}
	}
	if len(d.SuspectedOrphans) > 0 {
		evs = append(evs, instanceEvent(SuspectedOrphan, cur, d))
	}
	return evs
}

func instanceEvent(typ DetailType, cur gameinstance.Record, d InstanceDetail) Event {
	d.IdempotencyKey = fmt.Sprintf("%s:%d:%s", cur.GameInstanceID, cur.Version, typ)
	return Event{Type: typ, Time: cur.UpdatedAt, Instance: &d}
}

func instanceDetail(old *gameinstance.Record, cur gameinstance.Record) InstanceDetail {
	d := InstanceDetail{
		GameInstanceID:    cur.GameInstanceID,
		Version:           cur.Version,
		State:             cur.State,
		Region:            cur.Region,
		DesiredRegion:     cur.Fingerprint.DesiredRegion,
		GameServerVersion: cur.Fingerprint.GameServerVersion,
		Environment:       cur.Environment,
		ArmadaSet:         cur.ArmadaSet,
		Server:            cur.Server.Public(),
		Placement:         cur.PlacedBy(),
		FallbackUsed:      cur.FallbackUsed,
		LatencyRelaxed:    cur.LatencyRelaxed,
		Attempts:          make([]apishape.Attempt, 0, len(cur.Attempts)),
		RecoveredByLink:   cur.RecoveredByLink,
		LinkedServer:      cur.LinkInfo,
		EndReason:         cur.EndReason,
		UnhealthyReason:   cur.UnhealthyReason,
		CreatedAt:         timestamp(cur.CreatedAt),
		UpdatedAt:         timestamp(cur.UpdatedAt),
		LinkedAt:          timestamp(cur.LinkedAt),
		LastHeartbeatAt:   timestamp(cur.LastHeartbeatAt),
		EndedAt:           timestamp(cur.EndedAt),
		UnhealthyAt:       timestamp(cur.UnhealthyAt),
	}
	if old != nil {
		d.PreviousState = old.State
	}
	if cur.Fingerprint.Match {
		d.MatchID = cur.GameInstanceID
	}
	if cur.Fingerprint.GameLift != "" {
		d.PlacementID = cur.GameInstanceID
	}
	if cur.Queue != nil {
		d.QueuedUntil = timestamp(cur.Queue.Until)
	}
	switch {
	case cur.State == gameinstance.StateAllocated:
		d.AllocatedAt = timestamp(cur.UpdatedAt)
	case old != nil && old.State == gameinstance.StateAllocated:
		d.AllocatedAt = timestamp(old.UpdatedAt)
	}
	if cur.Failure != nil {
		d.Error = &apishape.Failure{Code: cur.Failure.Code, Message: bounded(cur.Failure.Message)}
	}
	for _, a := range cur.Attempts {
		a.Body, a.Reason, a.Error = "", bounded(a.Reason), bounded(a.Error)
		d.Attempts = append(d.Attempts, a)
	}
	return d
}

// bounded cuts s to MaxTextBytes at a rune boundary, marking the cut.
func bounded(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	const mark = "…"
	cut := MaxTextBytes - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
