package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// session is the allocated life of the server, on the game-server SDK:
// link, heartbeat, play, end. Every way out passes through play's loop,
// so exactly one reason ends the game.
type session struct {
	cfg      Config
	name     string
	address  string
	gamePort int
	game     *game
	gs       *gameserver.Client
	log      *log.Logger

	cancelLink context.CancelFunc
	linking    sync.WaitGroup
	hb         *gameserver.Heartbeater // nil until linked
}

func (s *session) play(ctx context.Context) error {
	maxLength := time.NewTimer(s.cfg.MaxGameLength)
	defer maxLength.Stop()
	linkCtx, cancel := context.WithCancel(ctx)
	s.cancelLink = cancel
	defer s.stopBackground()

	linked := make(chan error, 1)
	s.linking.Go(func() {
		_, err := s.gs.Link(linkCtx, gameserver.LinkRequest{Address: s.address, Ports: map[string]int{"game": s.gamePort}, ServerName: s.name})
		linked <- err
	})
	var hbDone <-chan struct{} // nil, so never ready, until linked
	for {
		select {
		case err := <-linked:
			if err != nil {
				if ctx.Err() != nil {
					continue // terminated while linking: the Done case ends the game
				}
				s.game.finish()
				return fmt.Errorf("link: %w", err)
			}
			s.log.Printf("linked; players may join on %s", s.address)
			s.game.open(s.gs.GameInstanceID())
			s.hb = s.gs.StartHeartbeats(ctx, gameserver.HeartbeatOptions{Interval: s.cfg.HeartbeatInterval})
			hbDone = s.hb.Done()
		case <-s.game.wins:
			return s.end(ctx, "IWON")
		case <-maxLength.C:
			return s.end(ctx, "MaxGameLength")
		case <-ctx.Done():
			return s.end(ctx, "Terminated")
		case <-hbDone:
			err := s.hb.Err()
			s.stopBackground()
			s.game.finish()
			if errors.Is(err, gameserver.ErrEnded) || errors.Is(err, gameserver.ErrUnhealthy) {
				s.log.Printf("%v; shutting down", err)
				return nil
			}
			return fmt.Errorf("heartbeat: %w", err)
		}
	}
}

// stopBackground stops linking and heartbeating and waits for both.
func (s *session) stopBackground() {
	s.cancelLink()
	s.linking.Wait()
	if s.hb != nil {
		_ = s.hb.Stop() // why it stopped was handled in play
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
	s.game.finish()
	if err != nil {
		return fmt.Errorf("end (%s): %w", reason, err)
	}
	s.log.Print("game ended")
	return nil
}
