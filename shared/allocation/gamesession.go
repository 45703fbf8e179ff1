package allocation

import (
	"context"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// GameSessionPlacement is a GameLift game session placement's part of its
// allocation (shared/gameliftapi): what its game server is told beyond the
// request, and the digest of everything it was asked.
type GameSessionPlacement struct {
	// Digest is the record's Fingerprint.GameLift: the same PlacementId
	// asked with other inputs is IDEMPOTENCY_MISMATCH, and the
	// placement's failure is final.
	Digest  string                   `json:"digest"`
	Session gameinstance.GameSession `json:"session"`
}

// AllocateGameSession is Allocate for a GameLift placement: p's game
// session goes to the game server in the payload (and with the queue
// message, so a queued placement's later attempts send it too), and the
// plan holds only the request's regions (its queue's), without
// FALLBACK_REGION.
func (s *Service) AllocateGameSession(ctx context.Context, req Request, p GameSessionPlacement) (Result, error) {
	return s.allocate(ctx, req, origin{session: &p})
}

// Validate reports what Allocate would refuse of req (INVALID_REQUEST),
// so a caller that keeps something beside the record can refuse it first.
func (s *Service) Validate(req Request) error {
	_, err := s.o.Defaults.Resolve(req)
	return err
}

// origin is who asks for an allocation: an API caller (zero), a FlexMatch
// match, or a GameLift placement.
type origin struct {
	match   bool
	session *GameSessionPlacement
}

func (o origin) digest() string {
	if o.session == nil {
		return ""
	}
	return o.session.Digest
}

func (o origin) gameSession() *gameinstance.GameSession {
	if o.session == nil {
		return nil
	}
	gs := o.session.Session
	return &gs
}

// message is the queue message that runs the placement's next attempt.
func (o origin) message(id string, req Request) QueuedPlacement {
	return QueuedPlacement{GameInstanceID: id, Request: req, Match: o.match, GameSession: o.session}
}

func (m QueuedPlacement) origin() origin { return origin{match: m.Match, session: m.GameSession} }
