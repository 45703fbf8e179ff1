package matchmaking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Allocations is the allocate use case (allocation.Service).
type Allocations interface {
	AllocateMatch(ctx context.Context, req allocation.Request) (allocation.Result, error)
	Get(ctx context.Context, gameInstanceID string) (gameinstance.Record, error)
	Reject(ctx context.Context, gameInstanceID string, f gameinstance.Failure) (gameinstance.Record, bool, error)
}

// Matches keeps what is needed of a match's event (MatchesTable).
type Matches interface {
	// Keep stores m unless its match is kept already (then it is a no-op:
	// the first copy of an event is the one kept).
	Keep(ctx context.Context, m gameinstance.Match) error
}

// Service places FlexMatch matches.
type Service struct {
	Allocations Allocations
	Matches     Matches
	// Tickets reads the players' latencies; nil: the region comes from
	// customEventData.region, then FALLBACK_REGION.
	Tickets Tickets
	// TicketsTimeout bounds reading every ticket (DescribeMatchmaking).
	TicketsTimeout time.Duration
	// QueueTimeout is how long a match may wait for capacity
	// (FLEXMATCH_QUEUE_TIMEOUT).
	QueueTimeout time.Duration
}

// Handle places the match of one MatchmakingSucceeded event, at most once
// however often the event arrives. nil means the event is done with: the
// match was placed, queued, recorded as Failed, or handled by another
// copy. An error wrapping ErrNotAMatch can never succeed; any other error
// is worth retrying the event for (a dependency was down and nothing
// decisive was written).
func (s *Service) Handle(ctx context.Context, raw []byte) error {
	ev, err := Decode(raw)
	if err != nil {
		return err
	}
	log := logging.FromContext(ctx).With("matchId", ev.Match.ID, "eventId", ev.Match.EventID)
	ctx = logging.WithLogger(ctx, log)
	switch rec, err := s.Allocations.Get(ctx, ev.Match.ID); {
	case err == nil:
		log.Info("match already handled: a copy of its event came before", "state", rec.State)
		return nil
	case !isCode(err, gameinstance.CodeNotFound):
		return fmt.Errorf("read match %s: %w", ev.Match.ID, err)
	}
	if err := s.Matches.Keep(ctx, ev.Match); err != nil {
		return fmt.Errorf("keep match %s: %w", ev.Match.ID, err)
	}
	if ev.Rejected != nil {
		return s.reject(ctx, ev.Match.ID, *ev.Rejected)
	}
	req := s.request(ctx, ev)
	res, err := s.Allocations.AllocateMatch(ctx, req)
	return s.settled(ctx, ev, res, err)
}

// request is the allocation request of the match: the players' latencies
// rank the regions; without them customEventData.region, then the
// deployment's FALLBACK_REGION.
func (s *Service) request(ctx context.Context, ev Event) allocation.Request {
	timeout := int(s.QueueTimeout / time.Second)
	req := allocation.Request{GameInstanceID: ev.Match.ID, GameServerVersion: ev.Custom.Version(), QueueTimeoutSeconds: &timeout}
	if s.Tickets != nil && len(ev.Match.TicketIDs) > 0 {
		tctx, cancel := context.WithTimeout(ctx, s.TicketsTimeout)
		players, err := latencies(tctx, s.Tickets, ev.Match.TicketIDs)
		cancel()
		if err != nil {
			logging.FromContext(ctx).Warn("players' latencies unavailable; placing the match by customEventData.region, then FALLBACK_REGION", "error", err)
		}
		req.PlayerLatencies = players
	}
	if len(req.PlayerLatencies) == 0 {
		req.DesiredRegion = ev.Custom.Region
	}
	return req
}

// settled turns the allocation's answer into the event's outcome.
func (s *Service) settled(ctx context.Context, ev Event, res allocation.Result, err error) error {
	log := logging.FromContext(ctx)
	var e *gameinstance.Error
	switch {
	case err == nil && res.Record.State == gameinstance.StateFailed:
		// A copy that met the match's final Failed record.
		log.Info("match already failed; its players were told", "failure", res.Record.Failure)
		return nil
	case err == nil:
		log.Info("match placed", "state", res.Record.State, "region", res.Record.Region, "created", res.Created)
		return nil
	case !errors.As(err, &e):
		return fmt.Errorf("allocate match %s: %w", ev.Match.ID, err)
	}
	switch e.Code {
	case gameinstance.CodeInvalidRequest:
		// The request is built from the event: what it asks is invalid.
		return s.reject(ctx, ev.Match.ID, gameinstance.Failure{Code: gameinstance.CodeInvalidMatch, Message: e.Message})
	case gameinstance.CodeAllocationInProgress, gameinstance.CodeIdempotencyMismatch:
		log.Info("match handled by another copy of its event", "code", e.Code)
		return nil
	case gameinstance.CodeUnavailable, gameinstance.CodeInternal:
		// The function logs the error: it names the match.
		return fmt.Errorf("allocate match %s: %w", ev.Match.ID, err)
	}
	// A failure the match's Failed record holds: AllocationFailed tells
	// its players.
	log.Warn("match not placed", "code", e.Code, "message", e.Message)
	return nil
}

func (s *Service) reject(ctx context.Context, id string, f gameinstance.Failure) error {
	rec, created, err := s.Allocations.Reject(ctx, id, f)
	if err != nil {
		return fmt.Errorf("record match %s as Failed (%s): %w", id, f.Code, err)
	}
	logging.FromContext(ctx).Warn("match cannot be placed as it is; recorded as Failed", "code", f.Code, "message", f.Message,
		"created", created, "state", rec.State)
	return nil
}

func isCode(err error, code gameinstance.Code) bool {
	var e *gameinstance.Error
	return errors.As(err, &e) && e.Code == code
}
