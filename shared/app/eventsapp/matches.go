package eventsapp

import (
	"context"
	"errors"
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Matches reads what MatchmakingFunction kept of a match (MatchesTable).
type Matches interface {
	Get(ctx context.Context, matchID string) (gameinstance.Match, error)
}

// matchEvents completes the events of a FlexMatch match's instance: its
// GameServerAllocated and AllocationFailed name the match's tickets, and
// GameServerAllocated is followed by the match's own event published
// again (name) with the server's address. An instance whose allocation's
// outcome was lost but whose server linked (Allocating → Linked,
// recoveredByLink) never has a GameServerAllocated: its GameServerLinked
// stands in for it. A match that was not kept is published without them
// (logged); a store that cannot say is an error, so the stream record is
// handed back.
func matchEvents(ctx context.Context, matches Matches, name string, evs []eventcatalog.Event) ([]eventcatalog.Event, error) {
	if matches == nil {
		return evs, nil
	}
	out := make([]eventcatalog.Event, 0, len(evs)+1)
	for _, e := range evs {
		out = append(out, e)
		placed := e.Instance != nil && (e.Type == eventcatalog.GameServerAllocated || recovered(e))
		if e.Instance == nil || e.Instance.MatchID == "" || (!placed && e.Type != eventcatalog.AllocationFailed) {
			continue
		}
		m, err := matches.Get(ctx, e.Instance.MatchID)
		switch {
		case errors.Is(err, gameinstance.ErrNotFound):
			logging.FromContext(ctx).Error("match not kept; its events go without its tickets", "matchId", e.Instance.MatchID, "event", e.Type)
			continue
		case err != nil:
			return nil, fmt.Errorf("match %s: %w", e.Instance.MatchID, err)
		}
		e.Instance.TicketIDs = m.TicketIDs
		if !placed {
			continue
		}
		again, err := eventcatalog.Matchmaking(name, m, e)
		if err != nil {
			logging.FromContext(ctx).Error("match's event not published again", "matchId", m.ID, "error", err)
			continue
		}
		out = append(out, again)
	}
	return out, nil
}

// recovered: e is the link that recorded an allocation whose outcome was
// lost (the record went from Allocating straight to Linked).
func recovered(e eventcatalog.Event) bool {
	return e.Type == eventcatalog.GameServerLinked && e.Instance.RecoveredByLink && e.Instance.PreviousState == gameinstance.StateAllocating
}
