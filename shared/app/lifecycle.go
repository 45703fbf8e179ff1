package app

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// LinkBack is LinkBackFunction: the game server's link, heartbeat and end.
func LinkBack(cfg config.Lifecycle, c Clients, log *slog.Logger) http.Handler {
	return httpapi.NewLinkBackHandler(Lifecycle(cfg, c), log)
}

// HealthSweep is HealthSweepFunction: one sweep per scheduled event.
func HealthSweep(cfg config.Lifecycle, c Clients, log *slog.Logger) func(context.Context, events.EventBridgeEvent) (lifecycle.SweepSummary, error) {
	svc := Lifecycle(cfg, c)
	return func(ctx context.Context, _ events.EventBridgeEvent) (lifecycle.SweepSummary, error) {
		return svc.Sweep(logging.WithLogger(ctx, log))
	}
}

// Lifecycle is the game-instance lifecycle as the functions run it.
func Lifecycle(cfg config.Lifecycle, c Clients) *lifecycle.Service {
	regions, _ := regionHealth(c.DynamoDB, cfg.RegionHealth)
	return &lifecycle.Service{
		Store: store.NewGameInstances(c.DynamoDB, cfg.GameInstancesTable),
		Policy: lifecycle.Policy{LinkTimeout: cfg.LinkTimeout, Period: cfg.HealthPeriod, FailureThreshold: cfg.HealthFailureThreshold,
			InitialDelay: cfg.HealthInitialDelay, Retention: cfg.RecordRetention},
		Regions: regions,
	}
}
