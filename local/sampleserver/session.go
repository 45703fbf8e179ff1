package main

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"
)

// session is the allocated life of the server: link, heartbeat, play,
// end. Every way out passes through play's loop, so exactly one reason
// ends the game.
type session struct {
	cfg      Config
	name     string
	address  string
	gamePort int
	game     *game
	lb       *linkBack
	log      *log.Logger

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (s *session) play(ctx context.Context) error {
	maxLength := time.NewTimer(s.cfg.MaxGameLength)
	defer maxLength.Stop()
	bg, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	defer s.stopBackground()

	linked := make(chan error, 1)
	s.wg.Go(func() {
		linked <- s.lb.link(bg, linkBody{Address: s.address, Ports: map[string]int{"game": s.gamePort}, ServerName: s.name})
	})
	states, hbFailed := make(chan string, 1), make(chan error, 1)
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
			s.game.open(s.lb.instanceID)
			s.wg.Go(func() { s.heartbeats(bg, states, hbFailed) })
		case <-s.game.wins:
			return s.end(ctx, "IWON")
		case <-maxLength.C:
			return s.end(ctx, "MaxGameLength")
		case <-ctx.Done():
			return s.end(ctx, "Terminated")
		case state := <-states:
			s.log.Printf("the backend says the instance is %s; shutting down", state)
			s.stopBackground()
			s.game.finish()
			return nil
		case err := <-hbFailed:
			s.stopBackground()
			s.game.finish()
			return err
		}
	}
}

// stopBackground stops linking and heartbeating and waits for both.
func (s *session) stopBackground() {
	s.cancel()
	s.wg.Wait()
}

// end records the end with the backend (no heartbeat may race it), then
// tells the players.
func (s *session) end(ctx context.Context, reason string) error {
	s.stopBackground()
	s.log.Printf("ending the game: %s", reason)
	err := s.lb.end(ctx, reason)
	s.game.finish()
	if err != nil {
		return fmt.Errorf("end (%s): %w", reason, err)
	}
	s.log.Print("game ended")
	return nil
}

// heartbeats reports until the backend says the instance is over.
// Transient failures are only logged: the backend tolerates a few missed
// periods before it gives up on the server.
func (s *session) heartbeats(ctx context.Context, states chan<- string, failed chan<- error) {
	t := time.NewTicker(s.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		state, err := s.lb.heartbeat(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && transient(err):
			s.log.Print(err)
		case err != nil:
			failed <- fmt.Errorf("heartbeat: %w", err)
			return
		case state == stateEnded || state == stateUnhealthy:
			states <- state
			return
		}
	}
}
