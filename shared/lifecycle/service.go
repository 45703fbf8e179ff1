package lifecycle

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Store reads and conditionally writes game instance records.
type Store interface {
	Get(ctx context.Context, gameInstanceID string) (gameinstance.Record, error)
	// Put writes rec if the stored version is still rec.Version, else
	// returns allocation.ErrVersionConflict.
	Put(ctx context.Context, rec gameinstance.Record) (gameinstance.Record, error)
	// Due lists up to limit instances of one health index shard whose
	// index key (HealthDeadline) is at or before now, oldest first,
	// continuing after cursor ("" = from the start); next is "" once the
	// shard has no more.
	Due(ctx context.Context, shard int, now time.Time, limit int, cursor string) (found []gameinstance.IndexEntry, next string, err error)
	// HealthShards is how many shards Due's index has.
	HealthShards() int
	// HealthOf reads what Policy.Review decides the instances ids by,
	// eventually consistently (cheaply; the review itself reads again).
	// Ids without a record are left out; one that cannot be decoded comes
	// back with its id alone and no state.
	HealthOf(ctx context.Context, ids []string) ([]gameinstance.Record, error)
	// Heartbeat records a heartbeat of a Linked instance whose token hash
	// is tokenHash in one conditional write of the record alone (no index
	// key moves). applied is false when the record is not Linked with that
	// token (or lacks its index key); rec is then the stored record, and
	// ErrNotFound when there is none.
	Heartbeat(ctx context.Context, id, tokenHash string, now time.Time) (rec gameinstance.Record, applied bool, err error)
	// PutRoom writes rec as Put does and, in the same transaction, change
	// to its game server's record: a room taken with an offer, a server
	// closed (gameinstance.ErrRoomNotHeld when the instance holds no room
	// there; nothing is written), a room given back (not twice).
	PutRoom(ctx context.Context, rec gameinstance.Record, change gameinstance.RoomChange) (gameinstance.Record, error)
	// ChangeRoom applies change to the game server's record alone.
	ChangeRoom(ctx context.Context, change gameinstance.RoomChange) error
	// BeatServer records a heartbeat of the game server at address for all
	// the sessions holding a room there, in one write of the server's
	// record, applied only while session holds a room there
	// (gameinstance.ErrNotFound otherwise: no such server, or no rooms),
	// and returns those sessions. Get and HealthOf count it as each of
	// those sessions' heartbeat.
	BeatServer(ctx context.Context, address, session string, now time.Time) ([]string, error)
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
	// Rooms: the deployment keeps game-server records, so game servers may
	// offer rooms when they link.
	Rooms bool
	// ReadBeforeHeartbeat: servers are told to heartbeat more often than
	// once a Period, so most heartbeats need no write (Policy.WriteDue).
	// Each then reads the record first (a consistent read costs a fifth
	// of a write unit) and writes only when due. Servers told to beat once
	// a Period are written at once, without the read: nearly every such
	// heartbeat is due.
	ReadBeforeHeartbeat bool

	// watch is what the sweep remembers between runs of a warm function
	// (watchCache); nil until the first run, and while a run holds it.
	watch atomic.Pointer[watchCache]
}

// maxConflictRetries bounds the read-transition-write loop when concurrent
// calls keep changing the record underneath.
const maxConflictRetries = 5

// transition is one call's change: the next record, whether it changed,
// and the game server's record write that goes with it (nil for none; a
// room given back is found by apply itself).
type transition func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, *gameinstance.RoomChange, error)

// plain is a transition that touches no game server's offer.
func plain(f func(gameinstance.Record, time.Time) (gameinstance.Record, bool, error)) transition {
	return func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, *gameinstance.RoomChange, error) {
		next, changed, err := f(rec, now)
		return next, changed, nil, err
	}
}

// errUnauthorized is the one answer for a wrong token and an unknown
// instance alike, so a caller without the token learns nothing, not even
// whether the instance exists.
var errUnauthorized = &gameinstance.Error{Code: gameinstance.CodeUnauthorized,
	Message: "the bearer token is not this game instance's PartnerGameToken, or there is no such game instance"}

// A hash to compare against when the instance does not exist, so both
// answers take the same time.
var absentHash = gameinstance.HashToken("no such game instance")

// Link: the game server is up and tells us so; with offer, it hosts that
// many sessions at once (rooms), this one included.
func (s *Service) Link(ctx context.Context, id, token string, info *gameinstance.LinkInfo, offer *gameinstance.RoomOffer) (gameinstance.Record, error) {
	return result(s.apply(ctx, id, &token, func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, *gameinstance.RoomChange, error) {
		next, changed, err := s.Policy.Link(rec, now, info)
		if err != nil {
			return next, false, nil, err
		}
		if changed && rec.State == gameinstance.StateAllocating {
			// A recovering link: of the claim's candidate tokens, this
			// server's is the instance's from now on, and only it.
			next.PartnerGameTokenHash, next.CandidateTokenHashes = gameinstance.HashToken(token), nil
		}
		if offer == nil {
			return next, changed, nil, nil
		}
		if !s.Rooms {
			return next, false, nil, invalidOffer("rooms cannot be offered: this deployment keeps no game-server records (GAME_SERVERS_TABLE is not set)")
		}
		joined, change, err := s.Policy.Offer(next, *offer)
		if err != nil {
			return next, false, nil, err
		}
		return joined, changed || joined.RoomServer != next.RoomServer, change, nil
	}))
}

// Heartbeat: the game server is still up; the answer carries its state.
// The common case, a Linked instance's server, is one conditional write
// with no read (Store.Heartbeat); everything else -- a wrong token, an
// instance not Linked -- is answered from the record the refused write
// returns, exactly as the read-transition-write path would.
func (s *Service) Heartbeat(ctx context.Context, id, token string) (gameinstance.Record, error) {
	if err := gameinstance.ValidateID(id); err != nil {
		return gameinstance.Record{}, err
	}
	if s.ReadBeforeHeartbeat {
		return result(s.apply(ctx, id, &token, s.heartbeatRead))
	}
	now := s.now()
	rec, applied, err := s.Store.Heartbeat(ctx, id, gameinstance.HashToken(token), now)
	switch {
	case applied:
		return rec, nil
	case errors.Is(err, gameinstance.ErrNotFound):
		return gameinstance.Record{}, errUnauthorized
	case err != nil:
		return gameinstance.Record{}, storeUnavailable(err)
	case !holdsToken(rec, token):
		return gameinstance.Record{}, errUnauthorized
	case rec.State == gameinstance.StateLinked && !s.Policy.WriteDue(rec, now):
		return rec, nil // refused, but a heartbeat was just recorded (a concurrent one): nothing to add
	case rec.State == gameinstance.StateLinked:
		// Linked, the right token, and still refused: a record without its
		// index key, or changed in between. The full path settles it.
		return result(s.apply(ctx, id, &token, plain(s.Policy.Heartbeat)))
	}
	_, _, err = s.Policy.Heartbeat(rec, now) // Ended, Unhealthy: no change, no error
	return rec, err
}

// heartbeatRead is a heartbeat on the read-first path: the record just
// read decides, and a due heartbeat of a Linked instance is written with
// the index key where it was, as the write-first path leaves it.
func (s *Service) heartbeatRead(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, *gameinstance.RoomChange, error) {
	next, changed, err := s.Policy.Heartbeat(rec, now)
	return next, changed, nil, err
}

// End: the game server's game is over.
func (s *Service) End(ctx context.Context, id, token, reason string) (gameinstance.Record, error) {
	return result(s.apply(ctx, id, &token, plain(func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, error) {
		return s.Policy.End(rec, now, reason)
	})))
}

// EndByBackend: the backend ends the instance (DELETE /v1/allocations/{id}),
// or cancels its queued placement.
func (s *Service) EndByBackend(ctx context.Context, id string) (gameinstance.Record, error) {
	return result(s.apply(ctx, id, nil, plain(func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, error) {
		switch rec.State {
		case gameinstance.StateAllocating:
			// A queued placement's attempt in flight too: it may be placing
			// the instance right now, so it is not cancelled under it.
			return rec, false, stillAllocating(rec, "end it")
		case gameinstance.StateQueued:
			return s.Policy.Cancel(rec, now)
		case gameinstance.StateFailed:
			if rec.Failure != nil && rec.Failure.Code == gameinstance.CodePlacementCancelled {
				return rec, false, nil // cancelled already: a DELETE repeated
			}
		}
		return s.Policy.End(rec, now, "EndedByBackend")
	})))
}

// CancelPlacement cancels id's queued placement (Queued → Failed
// PLACEMENT_CANCELLED) and never ends an instance: any other state is
// answered as it is, a cancelled placement included, and while an attempt
// is in flight ALLOCATION_IN_PROGRESS. Unlike EndByBackend, a placement
// placed between the caller's look and this write is left alone.
func (s *Service) CancelPlacement(ctx context.Context, id string) (gameinstance.Record, error) {
	return result(s.apply(ctx, id, nil, plain(func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, error) {
		switch rec.State {
		case gameinstance.StateAllocating:
			return rec, false, stillAllocating(rec, "cancel it")
		case gameinstance.StateQueued:
			return s.Policy.Cancel(rec, now)
		}
		return rec, false, nil
	})))
}

// stillAllocating: rec is claimed; what may be done to it waits.
func stillAllocating(rec gameinstance.Record, what string) error {
	return &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, RetryAfter: time.Second, State: rec.State,
		Message: fmt.Sprintf("game instance %q is still being allocated; %s once the allocation has finished", rec.GameInstanceID, what)}
}

// storeUnavailable: the store did not answer. A write may still have been
// saved with its reply lost, but every transition is idempotent, so the
// call can simply be retried.
func storeUnavailable(err error) error {
	return &gameinstance.Error{Code: gameinstance.CodeUnavailable, RetryAfter: time.Second, Err: err,
		Message: "the game instance store is unavailable; retry the same call (it is safe to repeat)"}
}

func result(rec gameinstance.Record, _ bool, err error) (gameinstance.Record, error) { return rec, err }

// apply reads the record, checks the token (when one is given), applies t
// and writes the result conditioned on the version it read, retrying on
// conflicts. An unchanged record is not written; written reports a write.
// A write that moves an instance holding a room out of a live state gives
// the room back in the same transaction; an offer goes with its link.
func (s *Service) apply(ctx context.Context, id string, token *string, t transition) (rec gameinstance.Record, written bool, err error) {
	if err := gameinstance.ValidateID(id); err != nil {
		return gameinstance.Record{}, false, err
	}
	for attempt := 0; ; attempt++ {
		rec, err := s.Store.Get(ctx, id)
		found := err == nil
		if err != nil && !errors.Is(err, gameinstance.ErrNotFound) {
			return gameinstance.Record{}, false, storeUnavailable(err)
		}
		if token != nil {
			against := rec
			if !found {
				against = gameinstance.Record{PartnerGameTokenHash: absentHash}
			}
			if !holdsToken(against, *token) || !found {
				return gameinstance.Record{}, false, errUnauthorized
			}
		} else if !found {
			return gameinstance.Record{}, false, &gameinstance.Error{Code: gameinstance.CodeNotFound, Message: fmt.Sprintf("no allocation for game instance %q", id)}
		}
		next, changed, change, err := t(rec, s.now())
		if err != nil {
			return rec, false, err
		}
		if change == nil && changed {
			change = released(rec, next)
		}
		stored, err := s.write(ctx, rec, next, changed, change)
		var capacity *gameinstance.CapacityError
		switch {
		case errors.Is(err, gameinstance.ErrVersionConflict) && attempt < maxConflictRetries:
			continue
		case errors.Is(err, gameinstance.ErrRoomNotHeld):
			return gameinstance.Record{}, false, noRoomToClose()
		case errors.As(err, &capacity):
			return gameinstance.Record{}, false, invalidOffer(capacity.Error())
		case err != nil:
			return gameinstance.Record{}, false, storeUnavailable(err)
		}
		return stored, changed, nil
	}
}

// write stores next (when changed) with the game server's change (when
// any); unchanged and without one, it writes nothing and answers rec.
func (s *Service) write(ctx context.Context, rec, next gameinstance.Record, changed bool, change *gameinstance.RoomChange) (gameinstance.Record, error) {
	switch {
	case change != nil && changed:
		return s.Store.PutRoom(ctx, next, *change)
	case change != nil:
		return rec, s.Store.ChangeRoom(ctx, *change)
	case changed:
		return s.Store.Put(ctx, next)
	}
	return rec, nil
}

// holdsToken: token is the instance's link-back credential. While the
// outcome is unknown that is any plan step's token; once it is recorded, only
// the token of the server that was recorded, so an orphan from a timed-out
// step cannot link. Every comparison runs, in constant time.
func holdsToken(rec gameinstance.Record, token string) bool {
	h := []byte(gameinstance.HashToken(token))
	match := subtle.ConstantTimeCompare(h, []byte(rec.PartnerGameTokenHash))
	if rec.State == gameinstance.StateAllocating {
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
