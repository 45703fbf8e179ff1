package lifecycle

import (
	"context"
	"errors"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// HeartbeatSessions is Heartbeat for a game server hosting rooms: the
// caller's session is heartbeaten by its token and, when it holds a room,
// the server's record takes one heartbeat for every session holding a room
// there (Store.BeatServer: one write, not one per session), so the server
// needs one heartbeat loop, not one per session, and its sessions' beats
// cost a write a server, not a write a session. others is each of those
// other sessions as read (eventually consistently) after the beat (Linked;
// Ended, Unhealthy: over, for the server to close its game); sessions that
// hold no room there any more are left out. A store failure answers
// UNAVAILABLE: the call is safe to repeat.
func (s *Service) HeartbeatSessions(ctx context.Context, id, token string) (rec gameinstance.Record, others []gameinstance.Record, err error) {
	rec, err = s.Heartbeat(ctx, id, token)
	if err != nil || !s.Rooms || rec.State != gameinstance.StateLinked || !rec.HoldsRoom() {
		return rec, nil, err
	}
	server := rec.RoomServer
	ids, err := s.Store.BeatServer(ctx, server, id, s.now())
	switch {
	case errors.Is(err, gameinstance.ErrNotFound):
		return rec, nil, nil // no server record, or the caller's room is gone
	case err != nil:
		return rec, nil, storeUnavailable(err)
	}
	ids = without(ids, id)
	if len(ids) > gameinstance.MaxRoomCapacity {
		// Takes are conditioned on the capacity, so a server never holds
		// more; bounded all the same, as the answer's list is.
		ids = ids[:gameinstance.MaxRoomCapacity]
	}
	if len(ids) == 0 {
		return rec, nil, nil
	}
	recs, err := s.Store.HealthOf(ctx, ids)
	if err != nil {
		return rec, nil, storeUnavailable(err)
	}
	byID := make(map[string]gameinstance.Record, len(recs))
	for _, r := range recs {
		byID[r.GameInstanceID] = r
	}
	for _, other := range ids {
		if r, ok := byID[other]; ok && r.RoomServer == server {
			others = append(others, r)
		}
	}
	return rec, others, nil
}

func without(ids []string, id string) []string {
	out := make([]string, 0, len(ids))
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
