package lifecycle

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

// Store reads and conditionally writes game instance records.
type Store interface {
	Get(ctx context.Context, gameInstanceID string) (allocation.Record, error)
	// Put writes rec if the stored version is still rec.Version, else
	// returns allocation.ErrVersionConflict.
	Put(ctx context.Context, rec allocation.Record) (allocation.Record, error)
	// Due lists up to limit instances of one health index shard whose
	// deadline is at or before now, oldest first, continuing after cursor
	// ("" = from the start); next is "" once the shard has no more.
	Due(ctx context.Context, shard int, now time.Time, limit int, cursor string) (ids []string, next string, err error)
	// HealthShards is how many shards Due's index has.
	HealthShards() int
}

// Service applies lifecycle calls.
type Service struct {
	Store  Store
	Policy Policy
	Now    func() time.Time
	// Regions, when set, hears of link timeouts: a server allocated in a
	// region that never links is a failed allocation there.
	Regions interface {
		LinkTimedOut(ctx context.Context, region string)
	}
}

// maxConflictRetries bounds the read-transition-write loop when concurrent
// calls keep changing the record underneath.
const maxConflictRetries = 5

type transition func(rec allocation.Record, now time.Time) (allocation.Record, bool, error)

// errUnauthorized is the one answer for a wrong token and an unknown
// instance alike, so a caller without the token learns nothing, not even
// whether the instance exists.
var errUnauthorized = &allocation.Error{Code: allocation.CodeUnauthorized,
	Message: "the bearer token is not this game instance's PartnerGameToken, or there is no such game instance"}

// A hash to compare against when the instance does not exist, so both
// answers take the same time.
var absentHash = allocation.HashToken("no such game instance")

// Link: the game server is up and tells us so.
func (s *Service) Link(ctx context.Context, id, token string, info *allocation.LinkInfo) (allocation.Record, error) {
	return result(s.apply(ctx, id, &token, func(rec allocation.Record, now time.Time) (allocation.Record, bool, error) {
		next, changed, err := s.Policy.Link(rec, now, info)
		if changed && rec.State == allocation.StateAllocating {
			// A recovering link: of the claim's candidate tokens, this
			// server's is the instance's from now on, and only it.
			next.PartnerGameTokenHash, next.CandidateTokenHashes = allocation.HashToken(token), nil
		}
		return next, changed, err
	}))
}

// Heartbeat: the game server is still up; the answer carries its state.
func (s *Service) Heartbeat(ctx context.Context, id, token string) (allocation.Record, error) {
	return result(s.apply(ctx, id, &token, s.Policy.Heartbeat))
}

// End: the game server's game is over.
func (s *Service) End(ctx context.Context, id, token, reason string) (allocation.Record, error) {
	return result(s.apply(ctx, id, &token, func(rec allocation.Record, now time.Time) (allocation.Record, bool, error) {
		return s.Policy.End(rec, now, reason)
	}))
}

// EndByBackend: the backend ends the instance (DELETE /v1/allocations/{id}).
func (s *Service) EndByBackend(ctx context.Context, id string) (allocation.Record, error) {
	return result(s.apply(ctx, id, nil, func(rec allocation.Record, now time.Time) (allocation.Record, bool, error) {
		if rec.State == allocation.StateAllocating {
			return rec, false, &allocation.Error{Code: allocation.CodeAllocationInProgress, RetryAfter: time.Second, State: rec.State,
				Message: fmt.Sprintf("game instance %q is still being allocated; end it once the allocation has finished", id)}
		}
		return s.Policy.End(rec, now, "EndedByBackend")
	}))
}

// storeUnavailable: the store did not answer. A write may still have been
// saved with its reply lost, but every transition is idempotent, so the
// call can simply be retried.
func storeUnavailable(err error) error {
	return &allocation.Error{Code: allocation.CodeUnavailable, RetryAfter: time.Second, Err: err,
		Message: "the game instance store is unavailable; retry the same call (it is safe to repeat)"}
}

func result(rec allocation.Record, _ bool, err error) (allocation.Record, error) { return rec, err }

// apply reads the record, checks the token (when one is given), applies t
// and writes the result conditioned on the version it read, retrying on
// conflicts. An unchanged record is not written; written reports a write.
func (s *Service) apply(ctx context.Context, id string, token *string, t transition) (rec allocation.Record, written bool, err error) {
	if err := allocation.ValidateGameInstanceID(id); err != nil {
		return allocation.Record{}, false, err
	}
	for attempt := 0; ; attempt++ {
		rec, err := s.Store.Get(ctx, id)
		found := err == nil
		if err != nil && !errors.Is(err, allocation.ErrNotFound) {
			return allocation.Record{}, false, storeUnavailable(err)
		}
		if token != nil {
			against := rec
			if !found {
				against = allocation.Record{PartnerGameTokenHash: absentHash}
			}
			if !holdsToken(against, *token) || !found {
				return allocation.Record{}, false, errUnauthorized
			}
		} else if !found {
			return allocation.Record{}, false, &allocation.Error{Code: allocation.CodeNotFound, Message: fmt.Sprintf("no allocation for game instance %q", id)}
		}
		next, changed, err := t(rec, s.now())
		if err != nil || !changed {
			return rec, false, err
		}
		stored, err := s.Store.Put(ctx, next)
		if errors.Is(err, allocation.ErrVersionConflict) && attempt < maxConflictRetries {
			continue
		}
		if err != nil {
			return allocation.Record{}, false, storeUnavailable(err)
		}
		return stored, true, nil
	}
}

// holdsToken: token is the instance's link-back credential. While the
// outcome is unknown that is any plan step's token; once it is recorded, only
// the token of the server that was recorded, so an orphan from a timed-out
// step cannot link. Every comparison runs, in constant time.
func holdsToken(rec allocation.Record, token string) bool {
	h := []byte(allocation.HashToken(token))
	match := subtle.ConstantTimeCompare(h, []byte(rec.PartnerGameTokenHash))
	if rec.State == allocation.StateAllocating {
		for _, c := range rec.CandidateTokenHashes {
			match |= subtle.ConstantTimeCompare(h, []byte(c))
		}
	}
	return match == 1
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}
