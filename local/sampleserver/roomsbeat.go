package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// A rooms server heartbeats all its sessions in one loop: each beat
// (HeartbeatOptions.AllSessions), through any one linked session's
// client, renews every session holding a room here, and its answer lists
// which others are over. N sessions then cost one call per interval, not
// N, and the backend sees one heartbeat for the server.
//
// The loop lends itself to one session at a time: it runs that session's
// Heartbeater, which the session stops (and waits for) when it ends, as a
// dedicated server's session stops its own, so no heartbeat through its
// token races its end call.

// startHeartbeats starts the host's heartbeat loop on ctx; stop ends it
// and waits until it has returned. It may be called more than once.
func (h *host) startHeartbeats(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var loop sync.WaitGroup
	loop.Go(func() { h.heartbeat(ctx) })
	return func() {
		cancel()
		loop.Wait()
	}
}

// heartbeat is the loop, until ctx ends. When the session it beats
// through stops its heartbeats, the loop moves on to another; when they
// stop on their own (its state is Ended or Unhealthy, or its token was
// refused for good), that session is told and the others go on. With none
// linked it waits for the next link.
func (h *host) heartbeat(ctx context.Context) {
	var via string
	for ctx.Err() == nil {
		s := h.borrow(ctx)
		if s == nil {
			select {
			case <-h.beatWake:
			case <-ctx.Done():
			}
			continue
		}
		if id := s.gs.GameInstanceID(); id != via {
			via = id
			h.log.Printf("heartbeating every session through %s", id)
		}
		<-s.hb.Done()
		if err := s.hb.Err(); err != nil {
			s.tell(err)
		}
	}
}

// wake wakes the loop, which may be waiting for a linked session. A wake
// already pending is enough.
func (h *host) wake() {
	select {
	case h.beatWake <- struct{}{}:
	default:
	}
}

// borrow starts the heartbeats through any one linked session not
// retired, and retires it: it is lent once. nil when there is none.
func (h *host) borrow(ctx context.Context) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.live {
		s.mu.Lock()
		lend := s.linked.Load() && !s.retired
		if lend {
			s.retired = true
			s.hb = s.gs.StartHeartbeats(ctx, gameserver.HeartbeatOptions{Interval: h.cfg.HeartbeatInterval,
				AllSessions: true, OnHeartbeat: h.dispatch})
		}
		s.mu.Unlock()
		if lend {
			return s
		}
	}
	return nil
}

// dispatch tells every live session an answer lists Ended or Unhealthy
// that its game is over. Ids the host does not play (ended already, or
// never started here) are ignored. It runs on the loop's heartbeats'
// goroutine and does not block.
func (h *host) dispatch(inst *gameserver.Instance) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range inst.Sessions {
		var sentinel error
		switch o.State {
		case gameserver.StateEnded:
			sentinel = gameserver.ErrEnded
		case gameserver.StateUnhealthy:
			sentinel = gameserver.ErrUnhealthy
		default:
			continue
		}
		if s, ok := h.live[o.GameInstanceID]; ok {
			s.tell(fmt.Errorf("heartbeat through %s answered it %s: %w", inst.GameInstanceID, o.State, sentinel))
		}
	}
}

// tell says the session's game is over with err (it ends as when its own
// heartbeats stop with err) and retires it. Only the first telling counts;
// it never blocks.
func (s *session) tell(err error) {
	s.mu.Lock()
	s.retired = true
	s.mu.Unlock()
	select {
	case s.over <- err:
	default:
	}
}
