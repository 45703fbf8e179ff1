package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// session is one game instance's life on the game-server SDK: link,
// heartbeat, play, end. Every way out passes through play's loop, so
// exactly one reason ends the game. A dedicated server plays one; a rooms
// server one per game instance it hosts (rooms.go).
type session struct {
	*server
	table *table
	gs    *gameserver.Client
	log   *log.Logger           // the server's, with the game instance in its prefix on a rooms server
	offer *gameserver.RoomOffer // rooms offered at link; nil: none
	// host, on a rooms server, heartbeats the session in its one loop
	// (roomsbeat.go) and tells it on over when its game is over.
	host *host
	over chan error // buffered 1; nil without a host

	linked     atomic.Bool // the link succeeded
	cancelLink context.CancelFunc
	linking    sync.WaitGroup

	mu      sync.Mutex
	hb      *gameserver.Heartbeater // heartbeats through this session's client; nil until linked (lent, with a host)
	retired bool                    // with a host: ending, told it is over, or lent already: not lent (again)
}

// linkRequest is what the session reports when it links, offering rooms.
func (s *session) linkRequest(rooms *gameserver.RoomOffer) gameserver.LinkRequest {
	return gameserver.LinkRequest{Address: s.address, Ports: map[string]int{"game": s.gamePort}, ServerName: s.name, Rooms: rooms}
}

func (s *session) play(ctx context.Context) error {
	maxLength := time.NewTimer(s.cfg.MaxGameLength)
	defer maxLength.Stop()
	linkCtx, cancel := context.WithCancel(ctx)
	s.cancelLink = cancel
	defer s.stopBackground()

	linked := make(chan error, 1)
	s.linking.Go(func() {
		_, err := s.gs.Link(linkCtx, s.linkRequest(s.offer))
		linked <- err
	})
	var hbDone <-chan struct{} // nil, so never ready, until a dedicated server's session links
	for {
		select {
		case err := <-linked:
			if err != nil {
				if ctx.Err() != nil {
					continue // terminated while linking: the Done case ends the game
				}
				s.table.finish()
				return fmt.Errorf("link: %w", err)
			}
			s.linked.Store(true)
			if s.offer != nil {
				s.log.Printf("linked, offering %v; players may join on %s", *s.offer, s.address)
			} else {
				s.log.Printf("linked; players may join on %s", s.address)
			}
			s.table.letIn()
			if s.host != nil {
				s.host.wake() // the host's loop heartbeats it from now on
				continue
			}
			s.hb = s.gs.StartHeartbeats(ctx, gameserver.HeartbeatOptions{Interval: s.cfg.HeartbeatInterval})
			hbDone = s.hb.Done()
		case <-s.table.wins:
			return s.end(ctx, "IWON")
		case <-maxLength.C:
			return s.end(ctx, "MaxGameLength")
		case <-ctx.Done():
			return s.end(ctx, "Terminated")
		case <-hbDone:
			return s.heartbeatsStopped(s.hb.Err())
		case err := <-s.over:
			return s.heartbeatsStopped(err)
		}
	}
}

// heartbeatsStopped closes the game when its heartbeats say it is over
// (err wraps ErrEnded or ErrUnhealthy: the backend closed it, so no end
// call) or cannot go on (err is why).
func (s *session) heartbeatsStopped(err error) error {
	s.stopBackground()
	s.table.finish()
	if errors.Is(err, gameserver.ErrEnded) || errors.Is(err, gameserver.ErrUnhealthy) {
		s.log.Printf("%v; game over", err)
		return nil
	}
	return fmt.Errorf("heartbeat: %w", err)
}

// stopBackground stops linking and heartbeating through the session's
// client (its own loop, or the host's) and waits for both, so that no
// heartbeat races its end call.
func (s *session) stopBackground() {
	s.cancelLink()
	s.linking.Wait()
	s.mu.Lock()
	s.retired = true
	hb := s.hb
	s.mu.Unlock()
	if hb != nil {
		_ = hb.Stop() // why it stopped was handled in play
	}
}

// endGrace bounds the end call: on SIGTERM a supervisor's grace period is
// running (the fleet's default is 5 s).
const endGrace = 4 * time.Second

// end records the end with the backend (no heartbeat may race it), then
// tells the players.
func (s *session) end(ctx context.Context, reason string) error {
	s.stopBackground()
	s.log.Printf("ending the game: %s", reason)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endGrace)
	defer cancel()
	_, err := s.gs.End(ctx, reason)
	s.table.finish()
	if err != nil {
		return fmt.Errorf("end (%s): %w", reason, err)
	}
	s.log.Print("game ended")
	return nil
}
