package allocclient_test

import (
	"context"
	"errors"
	"log"

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
