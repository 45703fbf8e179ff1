package allocclient_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

func Example() {
	ctx := context.Background()
	c, err := allocclient.NewFromEnvironment(ctx, "https://abc123.execute-api.eu-west-1.amazonaws.com")
	if err != nil {
		log.Fatal(err)
	}
	a, err := c.Allocate(ctx, allocclient.AllocateRequest{GameInstanceID: "gi-123",
		DesiredRegion: "us-west", GameServerVersion: "prag::sample-game-armada-set", ServerArgs: "-map=arena"})
	var e *allocclient.Error
	switch {
	case err == nil:
		log.Printf("players go to %s (new: %v)", a.Server.Address, a.Created)
	case allocclient.IsCode(err, allocclient.CodeNoCapacity):
		errors.As(err, &e)
		log.Printf("no capacity; try again in %s; regions asked: %v", e.RetryAfter, e.Allocation.Attempts)
	case errors.As(err, &e):
		log.Printf("allocation failed: %d %s: %s", e.Status, e.Code, e.Message)
	default:
		log.Printf("no answer: %v", err)
	}
}

func ExampleClient_AllocateAndWait() {
	ctx := context.Background()
	c, err := allocclient.NewFromEnvironment(ctx, "https://abc123.execute-api.eu-west-1.amazonaws.com")
	if err != nil {
		log.Fatal(err)
	}
	// Wait up to 2 minutes for capacity; the latency cap relaxes from 50 ms
	// to 100 ms after 10 s, and to none after 30 s more.
	wait, step, last := 120, 10, 30
	ctx, cancel := context.WithTimeout(ctx, time.Duration(wait+15)*time.Second) // the queue's deadline and one poll
	defer cancel()
	a, err := c.AllocateAndWait(ctx, allocclient.AllocateRequest{GameInstanceID: "gi-123",
		GameServerVersion: "prag::sample-game-armada-set", QueueTimeoutSeconds: &wait,
		PlayerLatencies: []allocclient.PlayerLatency{{PlayerID: "p1", LatencyMs: map[string]float64{"us-west": 42, "eu-central-1": 95}}},
		LatencyPolicies: []allocclient.LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: &step},
			{MaxPlayerLatencyMs: 100, DurationSeconds: &last}}})
	switch {
	case err == nil:
		log.Printf("players go to %s", a.Server.Address)
	case allocclient.IsCode(err, allocclient.CodePlacementTimedOut):
		log.Printf("no server before %s; regions asked: %v", a.QueuedUntil, a.Attempts)
	case errors.Is(err, context.DeadlineExceeded):
		// Still queued: the service keeps trying until a.QueuedUntil, unless ended.
		if _, err := c.End(context.Background(), "gi-123"); err != nil {
			log.Printf("cancel the placement: %v", err)
		}
	default:
		log.Printf("allocation failed: %v", err)
	}
}
