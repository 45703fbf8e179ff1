package main

import (
	"context"
	"log"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// On an Agones cluster the Agones SDK server (the sidecar of the game
// server's pod) stands for the registry and the allocation sidecar: the
// server marks its GameServer Ready, pings its health, and finds each
// allocation's payload in the GameServer's annotations.
const (
	// roomsCounter is the Fleet's Counter of rooms (the entry's
	// roomsCounter, local/dev.yaml's): Agones increments it per session.
	roomsCounter = "rooms"
	// agonesPoll: Agones writes a room's payload over the last one's, so a
	// rooms server reads them often.
	agonesPoll   = 50 * time.Millisecond
	healthPeriod = 2 * time.Second
)

// onAgones plays what Agones allocates to the GameServer: a dedicated
// server one game, then it shuts its GameServer down; a server with rooms
// every new payload as the next session, each session's end freeing its
// room (the Counter), until it is told to stop.
func (srv *server) onAgones(ctx context.Context, sdk *gameserver.AgonesSDK) error {
	if err := sdk.Ready(ctx); err != nil {
		return err
	}
	srv.log.Print("Ready on Agones; waiting for a payload in the GameServer's annotations")
	go srv.healthPings(ctx, sdk)
	var sessions sync.WaitGroup
	defer func() {
		sessions.Wait()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endGrace)
		defer cancel()
		if err := sdk.Shutdown(sctx); err != nil {
			srv.log.Printf("shutdown: %v", err)
		}
	}()
	for seen := ""; ; {
		p, err := sdk.WaitForPayload(ctx, seen, agonesPoll)
		if ctx.Err() != nil {
			srv.log.Print("asked to stop")
			return nil
		}
		logger := log.New(srv.log.Writer(), srv.log.Prefix()+p.GameInstanceID+" ", srv.log.Flags())
		var s *session
		if err == nil {
			s, err = srv.newSession(p, logger, nil)
		}
		switch {
		case srv.cfg.Rooms == 0 && err != nil:
			return err
		case srv.cfg.Rooms == 0:
			return s.play(ctx)
		case err != nil && p.GameInstanceID == "":
			return err
		case err != nil: // that session cannot be played: its room is free again
			logger.Printf("not started: %v", err)
			srv.freeRoom(ctx, logger)
		default:
			logger.Print("session started")
			sessions.Go(func() {
				if err := s.play(ctx); err != nil {
					logger.Printf("session dropped: %v", err)
				}
				srv.freeRoom(ctx, logger)
			})
		}
		seen = p.GameInstanceID
	}
}

// freeRoom takes one from the rooms Counter: Agones offers the room again.
func (srv *server) freeRoom(ctx context.Context, logger *log.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endGrace)
	defer cancel()
	if err := srv.cfg.Agones.AddToCounter(ctx, roomsCounter, -1); err != nil {
		logger.Printf("freeing its room: %v", err)
	}
}

// healthPings keeps Agones from marking the GameServer Unhealthy.
func (srv *server) healthPings(ctx context.Context, sdk *gameserver.AgonesSDK) {
	t := time.NewTicker(healthPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := sdk.Health(ctx); err != nil && ctx.Err() == nil {
				srv.log.Printf("health ping: %v", err)
			}
		}
	}
}
