// Package matchmaking is the FlexMatch front door: a GameLift
// MatchmakingSucceeded event in, the match's game instance (id = matchId)
// allocated through the same use case as POST /v1/allocations, and what is
// needed to publish the event again, with its game server, kept.
package matchmaking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// What FlexMatch sends (AWS, "FlexMatch events": MatchmakingSucceeded).
const (
	Source          = "aws.gamelift"
	DetailType      = "GameLift Matchmaking Event"
	SucceededType   = "MatchmakingSucceeded"
	maxEventBytes   = 256 << 10 // EventBridge's largest event
	maxCustomData   = 256       // CustomEventData's limit in the GameLift API
	maxTicketIDLen  = 128       // DescribeMatchmaking's TicketIds members
	maxTicketsInAny = gameinstance.MaxMatchPlayers
)

// ErrNotAMatch: the event is not one MatchmakingFunction can take at all
// (not JSON, not a MatchmakingSucceeded, no valid matchId). Nothing can be
// recorded for it: it goes to the function's on-failure destination.
var ErrNotAMatch = errors.New("not a FlexMatch MatchmakingSucceeded event")

// Event is a decoded MatchmakingSucceeded event.
type Event struct {
	Match gameinstance.Match
	// Players is how many players the match has.
	Players int
	Custom  CustomEventData
	// Rejected is why the match cannot be placed as it is (a Failed
	// record says so); nil when it can.
	Rejected *gameinstance.Failure
}

type envelope struct {
	ID         string          `json:"id"`
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

type detail struct {
	Type            string   `json:"type"`
	MatchID         string   `json:"matchId"`
	CustomEventData string   `json:"customEventData"`
	Tickets         []ticket `json:"tickets"`
	GameSessionInfo struct {
		Players []json.RawMessage `json:"players"`
	} `json:"gameSessionInfo"`
}

type ticket struct {
	TicketID string            `json:"ticketId"`
	Players  []json.RawMessage `json:"players"`
}

// Decode reads a MatchmakingSucceeded event as EventBridge delivers it to
// a Lambda target. An error wraps ErrNotAMatch; a match that is read but
// cannot be placed as it is has Rejected set.
func Decode(raw []byte) (Event, error) {
	if len(raw) > maxEventBytes {
		return Event{}, fmt.Errorf("%w: %d bytes, more than EventBridge's %d", ErrNotAMatch, len(raw), maxEventBytes)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrNotAMatch, err)
	}
	var d detail
	if err := json.Unmarshal(env.Detail, &d); err != nil {
		return Event{}, fmt.Errorf("%w: detail: %v", ErrNotAMatch, err)
	}
	if env.Source != Source || env.DetailType != DetailType || d.Type != SucceededType {
		return Event{}, fmt.Errorf("%w: source %q, detail-type %q, detail.type %q", ErrNotAMatch, bounded(env.Source), bounded(env.DetailType), bounded(d.Type))
	}
	if p := gameinstance.IDProblem(d.MatchID); p != "" {
		return Event{}, fmt.Errorf("%w: matchId %q cannot be a gameInstanceId: %s", ErrNotAMatch, bounded(d.MatchID), p)
	}
	ev := Event{Match: gameinstance.Match{ID: d.MatchID, EventID: bounded(env.ID)}}
	if len(env.Resources) > 0 {
		ev.Match.ConfigurationArn = bounded(env.Resources[0])
	}
	ev.Match.TicketIDs, ev.Players = tickets(d)
	var compact bytes.Buffer
	if err := json.Compact(&compact, env.Detail); err != nil {
		return Event{}, fmt.Errorf("%w: detail: %v", ErrNotAMatch, err)
	}
	switch {
	case ev.Players > gameinstance.MaxMatchPlayers || len(d.Tickets) > maxTicketsInAny:
		ev.Rejected = tooLarge("the match has %d players in %d tickets; at most %d are kept", ev.Players, len(d.Tickets), gameinstance.MaxMatchPlayers)
	case compact.Len() > gameinstance.MaxMatchDetailBytes:
		ev.Rejected = tooLarge("the match's event detail is %d bytes; at most %d are kept", compact.Len(), gameinstance.MaxMatchDetailBytes)
	default:
		ev.Match.Detail = compact.Bytes()
	}
	if ev.Rejected != nil {
		return ev, nil
	}
	custom, err := ParseCustomEventData(d.CustomEventData)
	if err != nil {
		ev.Rejected = &gameinstance.Failure{Code: gameinstance.CodeInvalidMatch, Message: err.Error()}
	}
	ev.Custom = custom
	return ev, nil
}

// tickets are the match's ticket ids (those DescribeMatchmaking could
// take; at most maxTicketsInAny are kept) and its number of players: the
// larger of the tickets' players and gameSessionInfo's.
func tickets(d detail) ([]string, int) {
	ids := make([]string, 0, min(len(d.Tickets), maxTicketsInAny))
	inTickets := 0
	for _, t := range d.Tickets {
		inTickets += len(t.Players)
		if len(ids) < maxTicketsInAny && validTicketID(t.TicketID) {
			ids = append(ids, t.TicketID)
		}
	}
	return ids, max(inTickets, len(d.GameSessionInfo.Players))
}

// validTicketID is DescribeMatchmaking's rule for a ticket id.
func validTicketID(id string) bool {
	if id == "" || len(id) > maxTicketIDLen {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func tooLarge(format string, args ...any) *gameinstance.Failure {
	return &gameinstance.Failure{Code: gameinstance.CodeMatchTooLarge, Message: fmt.Sprintf(format, args...)}
}

// bounded keeps what an event says about itself short enough to log.
func bounded(s string) string {
	const most = 256
	if len(s) <= most {
		return s
	}
	return strings.ToValidUTF8(s[:most], "") + "…"
}
