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
	cfg      Config
	name     string
	address  string
	gamePort int
	table    *table
	gs       *gameserver.Client
	log      *log.Logger
	offer    *gameserver.RoomOffer // rooms offered at link; nil: none

	linked     atomic.Bool // the link succeeded
	cancelLink context.CancelFunc
	linking    sync.WaitGroup
	hb         *gameserver.Heartbeater // nil until linked; never with beat
	// beat, on a rooms server, is its part in the host's one heartbeat
	// loop (roomsbeat.go): the session starts no Heartbeater of its own.
	beat *hostBeat
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
	var hbDone <-chan struct{} // nil, so never ready, until linked
	var over <-chan error      // the host's word that the game is over; nil without one
	if s.beat != nil {
		over = s.beat.over
	}
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
			if s.beat != nil {
				s.beat.linked() // the host's loop heartbeats it from now on
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
		case err := <-over:
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

// stopBackground stops linking and heartbeating (its own, or the host's
// through its client) and waits for both.
func (s *session) stopBackground() {
	s.cancelLink()
	s.linking.Wait()
	if s.hb != nil {
		_ = s.hb.Stop() // why it stopped was handled in play
	}
	if s.beat != nil {
		s.beat.stop()
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
