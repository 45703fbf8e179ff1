package gameserver_test

import (
	"context"
	"log"
	"net/http"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// A server hosting up to 4 sessions at once: the first comes from the
// allocation payload and offers the rooms when it links; the service
// sends the others to the session callback.
func ExampleSessionCallback() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()

	callback, err := gameserver.NewSessionCallback(gameserver.SessionCallbackOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// Its own port, on the host GameFabric allocated: the service calls
	// nothing else.
	srv := &http.Server{Addr: "203.0.113.10:7600", Handler: callback, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.ListenAndServe() }()

	link := gameserver.LinkRequest{Address: "203.0.113.10:7777", Ports: map[string]int{"game": 7777}}
	// play links one session, heartbeats while its game runs and ends it
	// (Example has the whole of it); every session has its own Client.
	play := func(p gameserver.Payload, link gameserver.LinkRequest) {
		gs, err := gameserver.New(gameserver.Options{Payload: p})
		if err != nil {
			log.Print(err)
			return
		}
		if _, err := gs.Link(ctx, link); err != nil {
			log.Print(err) // e.g. 401: the service gave this room to another server
			return
		}
		// ... heartbeat, play, End with the reason ...
	}

	first, err := gameserver.WaitForPayload(ctx, "/app/shared/payload.json", 0)
	if err != nil {
		log.Fatal(err)
	}
	offer := link
	offer.Rooms = callback.Offer("http://203.0.113.10:7600/sessions", 4)
	var sessions sync.WaitGroup
	sessions.Go(func() { play(first, offer) })
serve:
	for {
		select {
		case p := <-callback.Sessions():
			sessions.Go(func() { play(p, link) }) // links without Rooms
		case <-ctx.Done():
			break serve
		}
	}
	// Closing: no new sessions, here or at the service; the ones in play
	// end with "Terminated" (as ctx is done).
	callback.Stop()
	// ... link one live session with Rooms: &gameserver.RoomOffer{Capacity: 0} ...
	for p := range callback.Sessions() {
		// Accepted before Stop but never started: end it, so its room
		// comes back at once.
		if gs, err := gameserver.New(gameserver.Options{Payload: p}); err == nil {
			endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = gs.End(endCtx, "Terminated")
			cancel()
		}
	}
	sessions.Wait()
	_ = srv.Close()
}
