package gameserver_test

import (
	"context"
	"errors"
	"log"
	"os/signal"
	"syscall"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// A game server's whole life against the backend: wait for the
// allocation, link, heartbeat while the game runs, end it.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()

	payload, err := gameserver.WaitForPayload(ctx, "/app/shared/payload.json", 0)
	if err != nil {
		log.Fatal(err) // SIGTERM before any allocation, or an invalid payload
	}
	gs, err := gameserver.New(gameserver.Options{Payload: payload})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := gs.Link(ctx, gameserver.LinkRequest{Address: "203.0.113.10:7777", Ports: map[string]int{"game": 7777}}); err != nil {
		log.Fatal(err)
	}
	// ... let players in; payload.ServerArgs says what to play ...
	hb := gs.StartHeartbeats(ctx, gameserver.HeartbeatOptions{})
	gameOver := make(chan string) // the game sends the reason it ended

	reason := ""
	select {
	case reason = <-gameOver:
	case <-ctx.Done():
		reason = "Terminated"
	case <-hb.Done():
		if errors.Is(hb.Err(), gameserver.ErrEnded) || errors.Is(hb.Err(), gameserver.ErrUnhealthy) {
			return // the backend is done with this instance: shut down
		}
		reason = "HeartbeatFailed"
	}
	_ = hb.Stop() // no heartbeat may race the end
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := gs.End(endCtx, reason); err != nil {
		log.Print(err)
	}
}
