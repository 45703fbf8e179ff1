package lifecycle

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// renewWorkers bounds the concurrent writes of one all-sessions heartbeat
// (a server holds at most gameinstance.MaxRoomCapacity sessions).
const renewWorkers = 8

// errNotOnServer: the session does not hold a room on the caller's server
// (any more): it is not the caller's to renew, and not reported.
var errNotOnServer = errors.New("the session holds no room on this game server")

// HeartbeatSessions is Heartbeat for a game server hosting rooms: the
// caller's session is heartbeaten by its token and, when it holds a room,
// every other session holding a room on the same server is renewed in the
// same call, so the server needs one heartbeat loop, not one per session.
// others is each of those sessions as the call left it (Linked: renewed or
// current; Ended, Unhealthy: over, for the server to close its game);
// sessions that hold no room there any more are left out. A store failure
// on any of them answers UNAVAILABLE: the call is safe to repeat, and a
// repeat writes nothing that is already current.
func (s *Service) HeartbeatSessions(ctx context.Context, id, token string) (rec gameinstance.Record, others []gameinstance.Record, err error) {
	rec, err = s.Heartbeat(ctx, id, token)
	if err != nil || !s.Rooms || rec.State != gameinstance.StateLinked || !rec.HoldsRoom() {
		return rec, nil, err
	}
	ids, err := s.Store.RoomSessions(ctx, rec.RoomServer)
	switch {
	case errors.Is(err, gameinstance.ErrNotFound):
		return rec, nil, nil
	case err != nil:
		return rec, nil, storeUnavailable(err)
	}
	ids = without(ids, id)
	if len(ids) > gameinstance.MaxRoomCapacity {
		// Takes are conditioned on the capacity, so a server never holds
		// more; bounded all the same, as the answer's list is.
		ids = ids[:gameinstance.MaxRoomCapacity]
	}
	others, err = s.renewAll(ctx, rec.RoomServer, ids)
	return rec, others, err
}

// renewAll renews ids on server, at most renewWorkers at a time, in ids'
// order in the answer.
func (s *Service) renewAll(ctx context.Context, server string, ids []string) ([]gameinstance.Record, error) {
	recs := make([]gameinstance.Record, len(ids))
	errs := make([]error, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(renewWorkers, len(ids)) {
		wg.Go(func() {
			for i := range next {
				recs[i], errs[i] = s.renew(ctx, ids[i], server)
			}
		})
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	var out []gameinstance.Record
	for i, err := range errs {
		switch {
		case errors.Is(err, errNotOnServer):
		case err != nil:
			return nil, err
		default:
			out = append(out, recs[i])
		}
	}
	return out, nil
}

// renew is one other session's heartbeat, conditioned on its room: one
// conditional write behind a server beating once a Period, a read first
// (and a write only when due) behind one beating faster, as for Heartbeat.
func (s *Service) renew(ctx context.Context, id, server string) (gameinstance.Record, error) {
	onServer := func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, *gameinstance.RoomChange, error) {
		switch {
		case rec.RoomServer != server:
			return rec, false, nil, errNotOnServer
		case rec.State != gameinstance.StateLinked:
			return rec, false, nil, nil // over, or not linked yet: reported as it is
		}
		return s.heartbeatRead(rec, now)
	}
	if gameinstance.ValidateID(id) != nil {
		return gameinstance.Record{}, errNotOnServer // not an id we wrote; nothing to renew
	}
	if s.ReadBeforeHeartbeat {
		return s.renewed(s.apply(ctx, id, nil, onServer))
	}
	now := s.now()
	rec, applied, err := s.Store.RenewSession(ctx, id, server, now)
	switch {
	case applied:
		return rec, nil
	case errors.Is(err, gameinstance.ErrNotFound):
		return gameinstance.Record{}, errNotOnServer
	case err != nil:
		return gameinstance.Record{}, storeUnavailable(err)
	case rec.RoomServer != server:
		return rec, errNotOnServer
	case rec.State == gameinstance.StateLinked && s.Policy.WriteDue(rec, now):
		// Linked there and still refused: a record without its index key,
		// or changed in between. The full path settles it.
		return s.renewed(s.apply(ctx, id, nil, onServer))
	}
	return rec, nil
}

// renewed is apply's answer for a renewal: a session gone is not one to
// report.
func (s *Service) renewed(rec gameinstance.Record, _ bool, err error) (gameinstance.Record, error) {
	var ge *gameinstance.Error
	if errors.As(err, &ge) && ge.Code == gameinstance.CodeNotFound {
		return rec, errNotOnServer
	}
	return rec, err
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
