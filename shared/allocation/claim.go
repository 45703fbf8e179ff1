package allocation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// claim takes the game instance for this call: the claim as stored when
// it did. A claim that found the instance taken answers instead: the
// finished allocation (a replay), or an error saying why this call must
// wait or change. A claim whose reply never arrived is read back: if it
// was saved, it is ours and the call goes on.
func (s *Service) claim(ctx context.Context, b budget, rec gameinstance.Record) (claimed gameinstance.Record, existing *gameinstance.Record, err error) {
	now := rec.CreatedAt
	// An expired claim is in doubt until its server had time to link back:
	// taking it over sooner could allocate a second server.
	claimed, err = s.o.Store.Claim(ctx, rec, now.Add(-s.o.LinkTimeout))
	var conflict *gameinstance.ClaimConflictError
	switch {
	case err == nil:
		return claimed, nil, nil
	case errors.As(err, &conflict):
		existing, err = s.onConflict(rec, now, conflict.Existing)
		return rec, existing, err
	case errors.Is(err, gameinstance.ErrTooLarge):
		// Cannot happen within the request's limits; nothing was written.
		return rec, nil, internal("the claim record is too large", err)
	}
	// Saved or not? Only the record can say.
	rctx, cancel := detached(ctx, b.upstream, 0)
	defer cancel()
	stored, gerr := s.o.Store.Get(rctx, rec.GameInstanceID)
	switch {
	case gerr == nil && stored.ClaimedBy(rec.ClaimID):
		return stored, nil, nil
	case gerr == nil:
		existing, err = s.onConflict(rec, now, stored)
		return rec, existing, err
	}
	return rec, nil, unavailable("the allocation store is unavailable; nothing was allocated; retry", err)
}

func (s *Service) onConflict(rec gameinstance.Record, now time.Time, existing gameinstance.Record) (*gameinstance.Record, error) {
	if existing.Fingerprint != rec.Fingerprint {
		return nil, &gameinstance.Error{Code: gameinstance.CodeIdempotencyMismatch, Message: fmt.Sprintf(
			"game instance %q was already requested with a different desiredRegion, gameServerVersion or serverArgs", rec.GameInstanceID)}
	}
	if existing.State == gameinstance.StateAllocating {
		if now.Before(existing.LeaseExpiresAt) {
			return nil, &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, RetryAfter: gameinstance.SecondsUntil(existing.LeaseExpiresAt, now),
				Message: fmt.Sprintf("an allocation for game instance %q is in progress; retry later", rec.GameInstanceID)}
		}
		return nil, &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, RetryAfter: gameinstance.SecondsUntil(existing.LeaseExpiresAt.Add(s.o.LinkTimeout), now),
			Message: fmt.Sprintf("an earlier allocation for game instance %q may have succeeded without being recorded; "+
				"its game server has until LINK_TIMEOUT to link back before a retry allocates afresh", rec.GameInstanceID)}
	}
	return &existing, nil
}

// record writes the outcome inside the budget's tail. A write that failed
// is read back, because it may have been saved with only its reply lost.
// An outcome too large for DynamoDB (it cannot be, given the bounds on what
// GameFabric sends, but the store checks) is recorded without its details.
func (s *Service) record(ctx context.Context, b budget, rec gameinstance.Record) (gameinstance.Record, error) {
	wctx, cancel := detached(ctx, b.record, 0)
	defer cancel()
	stored, err := s.o.Store.Finish(wctx, rec)
	if errors.Is(err, gameinstance.ErrTooLarge) {
		logging.FromContext(ctx).Warn("outcome too large to record; recording it without attempt details",
			"gameInstanceId", rec.GameInstanceID, "attempts", len(rec.Attempts))
		rec.Attempts = withoutDetails(rec.Attempts)
		stored, err = s.o.Store.Finish(wctx, rec)
	}
	switch {
	case err == nil:
		return stored, nil
	case errors.Is(err, gameinstance.ErrClaimLost):
		return gameinstance.Record{}, s.claimLost(ctx, rec, err)
	}
	rctx, cancel := detached(ctx, b.end, 0)
	defer cancel()
	if got, gerr := s.o.Store.Get(rctx, rec.GameInstanceID); gerr == nil && got.FinishedBy(rec.ClaimID, rec.State) {
		return got, nil
	}
	// The operator's record of a server we could not write down; no token.
	logging.FromContext(ctx).Error("recording allocation outcome failed",
		"gameInstanceId", rec.GameInstanceID, "state", rec.State, "region", rec.Region, "server", rec.Server, "error", err)
	return gameinstance.Record{}, s.outcomeUnrecorded(rec, err)
}

// claimLost: another call took the claim over, so this call's outcome is
// not the instance's. The caller retries and gets the other call's.
func (s *Service) claimLost(ctx context.Context, rec gameinstance.Record, err error) error {
	logging.FromContext(ctx).Error("allocation claim lost before its outcome was recorded",
		"gameInstanceId", rec.GameInstanceID, "state", rec.State, "region", rec.Region, "server", rec.Server, "error", err)
	return unavailable(fmt.Sprintf("another request took over game instance %q while this one was allocating; "+
		"retry with the same gameInstanceId to get its result", rec.GameInstanceID), err)
}

// outcomeUnrecorded answers an outcome the store would not record. The
// claim stays Allocating and in doubt: for an allocated server, its
// link-back adopts it, or the health sweep fails it once the server had
// time to link; either way a retry never allocates a second server
// meanwhile.
func (s *Service) outcomeUnrecorded(rec gameinstance.Record, err error) *gameinstance.Error {
	msg := "every attempt failed but recording that failed; retry with the same gameInstanceId"
	if rec.State == gameinstance.StateAllocated {
		msg = fmt.Sprintf("GameFabric allocated a game server in %s but recording it failed; retry with the same "+
			"gameInstanceId: the retry returns that server once it links back, and allocates afresh only if it never does", rec.Region)
	}
	e := unavailable(msg, err)
	e.RetryAfter = gameinstance.SecondsUntil(rec.LeaseExpiresAt, s.o.Now())
	return e
}

// aborted answers a plan the room pool stopped (RoomResult.Err), or an
// Agones allocator whose answer was lost (errAnswerLost), without
// recording an outcome: the claim is not this call's any more, or it may
// hold a room or a server nobody can confirm. Then it stays Allocating and
// in doubt, as when an outcome cannot be recorded: a replay waits, the
// session's or server's link adopts it (and holds the room), else the
// health sweep fails the claim and gives the room back.
func (s *Service) aborted(ctx context.Context, rec gameinstance.Record, run planRun) error {
	if errors.Is(run.abort, gameinstance.ErrClaimLost) {
		return s.claimLost(ctx, rec, run.abort)
	}
	msg := "the allocation store failed while placing the game instance in a room; retry with the same gameInstanceId: " +
		"the retry returns the placement if the game server links, and allocates afresh only if it never does"
	if errors.Is(run.abort, errAnswerLost) {
		msg = "the Agones allocator may have allocated a game server but its answer was lost; retry with the same gameInstanceId: " +
			"the retry returns that server once it links back, and allocates afresh only if it never does"
	}
	logging.FromContext(ctx).Error("allocation stopped; the claim stays in doubt", "gameInstanceId", rec.GameInstanceID, "error", run.abort)
	e := unavailable(msg, run.abort)
	e.RetryAfter = gameinstance.SecondsUntil(rec.LeaseExpiresAt, s.o.Now())
	if errors.Is(run.abort, errAnswerLost) {
		e.Attempts = run.after(rec.Attempts)
	}
	return e
}

// newClaim is the Allocating record this call will try to claim, and the
// link-back tokens of each plan step (see stepTokens).
func (s *Service) newClaim(spec Spec) (gameinstance.Record, [][]string, error) {
	tokens, err := s.stepTokens(spec)
	if err != nil {
		return gameinstance.Record{}, nil, internal("mint partner game tokens", err)
	}
	claimID, err := mintToken(s.o.Random)
	if err != nil {
		return gameinstance.Record{}, nil, internal("mint claim id", err)
	}
	now := s.o.Now()
	return gameinstance.Record{
		GameInstanceID:       spec.GameInstanceID,
		State:                gameinstance.StateAllocating,
		Fingerprint:          spec.Fingerprint,
		Environment:          spec.Environment,
		ArmadaSet:            spec.ArmadaSet,
		PartnerGameTokenHash: gameinstance.HashToken(tokens[0][0]),
		CandidateTokenHashes: candidateHashes(spec, tokens),
		ClaimID:              claimID,
		LatencyRelaxed:       spec.LatencyRelaxed,
		LeaseExpiresAt:       now.Add(s.o.Lease),
		CreatedAt:            now,
		UpdatedAt:            now,
		ExpiresAt:            now.Add(s.o.Retention),
		// The health sweep watches the claim from the start, so a claim
		// whose outcome is never recorded cannot stay Allocating forever.
		// An Allocated outcome keeps this deadline: the index entry is
		// written once, not moved.
		HealthDeadline: now.Add(s.o.LinkTimeout),
	}, tokens, nil
}

// stepTokens is the link-back credential of every try of every plan step:
// [step][0] for its Allocator, [step][1..RoomTries] for the game servers
// with a free room it may call back. Minted ones all differ: a try that
// times out may still have a server (or a session) holding its token, and
// with its own token that orphan cannot link to the instance another
// server holds. A caller's token is used for every try.
func (s *Service) stepTokens(spec Spec) ([][]string, error) {
	perStep := 1
	if s.o.Rooms != nil && !spec.Fingerprint.Dedicated {
		perStep += RoomTries
	}
	tokens := make([][]string, max(len(spec.Plan), 1))
	for i := range tokens {
		tokens[i] = make([]string, perStep)
		for k := range tokens[i] {
			tokens[i][k] = spec.PartnerGameToken
			if tokens[i][k] == "" {
				var err error
				if tokens[i][k], err = mintToken(s.o.Random); err != nil {
					return nil, err
				}
			}
		}
	}
	return tokens, nil
}

// candidateHashes are the tokens a server allocated under this claim may
// hold, kept while the outcome is unknown so an in-doubt claim's server can
// still link (see lifecycle.Policy.Link). Only minted tokens qualify: a
// caller's own token proves nothing about which server holds it.
func candidateHashes(spec Spec, tokens [][]string) []string {
	if spec.PartnerGameToken != "" {
		return nil
	}
	var hashes []string
	for _, step := range tokens {
		for _, t := range step {
			hashes = append(hashes, gameinstance.HashToken(t))
		}
	}
	return hashes
}
