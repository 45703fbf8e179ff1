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

// hostBeat is a session's side of that loop. The loop borrows the
// session's client only while the session plays: ending, the session
// takes it back (stop) and waits for the loop to let go, so no heartbeat
// through its token races its end call, as stopping its own Heartbeater
// guarantees on a dedicated server.
type hostBeat struct {
	over chan error      // the host says the game is over; buffered, so telling never blocks
	wake chan<- struct{} // the host's: wakes its loop when this session links

	mu      sync.Mutex
	retired bool               // ending, or told it is over: not lent again
	cancel  context.CancelFunc // ends the loop's beats through this session, while lent
	done    chan struct{}      // closes when the loop has let go
}

func newHostBeat(wake chan<- struct{}) *hostBeat {
	return &hostBeat{over: make(chan error, 1), wake: wake}
}

// linked wakes the host's loop, which may be waiting for a linked
// session. A wake already pending is enough.
func (b *hostBeat) linked() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// lend gives the loop a context for beating through this session, ended
// when the session stops; release must follow. ok is false once the
// session is retired.
func (b *hostBeat) lend(ctx context.Context) (beatCtx context.Context, release func(), ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.retired {
		return nil, nil, false
	}
	beatCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	b.cancel, b.done = cancel, done
	return beatCtx, func() {
		cancel()
		b.mu.Lock()
		b.cancel, b.done = nil, nil
		b.mu.Unlock()
		close(done)
	}, true
}

// tell says the game is over with err (the session ends it as when its
// own heartbeats stopped with err). Only the first telling counts; it
// never blocks, as it runs on the loop's goroutine.
func (b *hostBeat) tell(err error) {
	b.mu.Lock()
	b.retired = true // its play is ending: beating through it would only fail
	b.mu.Unlock()
	select {
	case b.over <- err:
	default:
	}
}

// stop retires the session from the loop and waits until the loop no
// longer beats through it. It may be called more than once.
func (b *hostBeat) stop() {
	b.mu.Lock()
	b.retired = true
	cancel, done := b.cancel, b.done
	b.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// startHeartbeats starts the host's heartbeat loop on ctx (h.sessions
// counts it); stop ends it and waits until it has returned. It may be
// called more than once.
func (h *host) startHeartbeats(ctx context.Context) (stop func()) {
	h.beatWake = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	h.sessions.Go(func() {
		defer close(done)
		h.heartbeat(ctx)
	})
	return func() {
		cancel()
		<-done
	}
}

// heartbeat is the rooms server's one heartbeat loop, until ctx ends. It
// beats through one linked session at a time; when that session stops
// playing or its own heartbeat fails for good, the session is told and
// the loop moves to another. With none linked it waits for the next link.
func (h *host) heartbeat(ctx context.Context) {
	var via string
	for ctx.Err() == nil {
		s, beatCtx, release := h.borrow(ctx)
		if s == nil {
			// Every session that could link later wakes the loop when it
			// does; until then there is nothing to beat through.
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
		err := s.gs.RunHeartbeats(beatCtx, gameserver.HeartbeatOptions{Interval: h.cfg.HeartbeatInterval,
			AllSessions: true, OnHeartbeat: h.dispatch})
		if beatCtx.Err() == nil {
			// Its own state is Ended or Unhealthy, or its token was
			// refused for good: it cannot go on, the others may.
			s.beat.tell(err)
		}
		release()
	}
}

// borrow lends the loop any one linked session that still plays; nil
// when there is none.
func (h *host) borrow(ctx context.Context) (*session, context.Context, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.live {
		if !s.linked.Load() {
			continue
		}
		if beatCtx, release, ok := s.beat.lend(ctx); ok {
			return s, beatCtx, release
		}
	}
	return nil, nil, nil
}

// dispatch tells every live session an answer lists Ended or Unhealthy
// that its game is over. Ids the host does not play (ended already, or
// never started here) are ignored. It runs on the loop's goroutine and
// does not block.
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
			s.beat.tell(fmt.Errorf("heartbeat through %s answered it %s: %w", inst.GameInstanceID, o.State, sentinel))
		}
	}
}
