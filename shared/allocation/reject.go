package allocation

import (
	"context"
	"errors"
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Reject records a FlexMatch match that cannot be placed as it is (its
// event is invalid or too large) as Failed with f, without a claim or an
// attempt, so that AllocationFailed tells its players. A match with a
// record already keeps it: created is false and the record found is
// returned. Nothing is written for an invalid id.
func (s *Service) Reject(ctx context.Context, gameInstanceID string, f gameinstance.Failure) (rec gameinstance.Record, created bool, err error) {
	if err := gameinstance.ValidateID(gameInstanceID); err != nil {
		return gameinstance.Record{}, false, err
	}
	claimID, err := mintToken(s.o.Random)
	if err != nil {
		return gameinstance.Record{}, false, internal("mint claim id", err)
	}
	now := s.o.Now()
	rec = gameinstance.Record{GameInstanceID: gameInstanceID, State: gameinstance.StateFailed, Fingerprint: gameinstance.Fingerprint{Match: true},
		Failure: &f, ClaimID: claimID, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(s.o.Retention)}
	_, err = s.o.Store.Claim(ctx, rec, now.Add(-s.o.LinkTimeout))
	var conflict *gameinstance.ClaimConflictError
	switch {
	case err == nil:
		return rec, true, nil
	case errors.As(err, &conflict):
		return conflict.Existing, false, nil
	}
	// Saved or not? Only the record can say.
	stored, gerr := s.o.Store.Get(ctx, gameInstanceID)
	if gerr == nil {
		return stored, stored.ClaimedBy(claimID), nil
	}
	return gameinstance.Record{}, false, unavailable(fmt.Sprintf("the allocation store is unavailable; match %s was not recorded", gameInstanceID), err)
}
