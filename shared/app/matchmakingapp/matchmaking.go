// Package matchmakingapp is MatchmakingFunction's composition root:
// FlexMatch's MatchmakingSucceeded events in (an EventBridge rule's
// asynchronous invocations), the matches' game instances allocated.
package matchmakingapp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamelifttickets"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/matchmaking"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Clients are AllocateFunction's clients and GameLift's.
type Clients struct {
	allocateapp.Clients
	GameLift gamelifttickets.API
}

// NewClients builds the clients from an AWS configuration. GameLift's
// client retries throttling within DescribeMatchmakingTimeout only.
func NewClients(awsCfg aws.Config, c allocateapp.Clients) Clients {
	return Clients{Clients: c, GameLift: gamelift.NewFromConfig(awsCfg)}
}

// Service is the front door as the function runs it.
func Service(cfg config.Matchmaking, c Clients) *matchmaking.Service {
	records, servers := app.Records(c.DynamoDB, cfg.GameInstancesTable, cfg.GameServersTable, cfg.Allocation.Retention)
	return &matchmaking.Service{
		Allocations:    allocateapp.Service(cfg.Allocate, c.Clients, records, servers),
		Matches:        store.NewMatches(c.DynamoDB, cfg.MatchesTable, cfg.Allocation.Retention),
		Tickets:        gamelifttickets.Tickets{API: c.GameLift},
		TicketsTimeout: cfg.TicketsTimeout,
		QueueTimeout:   cfg.MatchQueueTimeout,
	}
}

// Handler is MatchmakingFunction. An error makes Lambda retry the event
// (twice), then send it to the on-failure destination: it is returned for
// a dependency that was down, and for an event that is no match at all,
// which is logged as permanent so that nobody waits for the retries.
func Handler(svc *matchmaking.Service, log *slog.Logger) func(context.Context, json.RawMessage) error {
	return func(ctx context.Context, event json.RawMessage) error {
		ctx = logging.WithLogger(ctx, log)
		err := svc.Handle(ctx, event)
		switch {
		case errors.Is(err, matchmaking.ErrNotAMatch):
			log.Error("event set aside: it cannot be a match (permanent; it goes to MatchmakingDeadLetterQueue)", "error", err)
		case err != nil:
			log.Error("match not handled yet; the event is retried", "error", err)
		}
		return err
	}
}
