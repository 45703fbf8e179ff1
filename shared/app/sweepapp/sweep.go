// Package sweepapp is HealthSweepFunction's composition root.
package sweepapp

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/app/healthapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// maxGaugedServers bounds the read behind the rooms gauge: a run reads at
// most this many game servers' records (one Scan page per 1,000).
const maxGaugedServers = 10000

// Handler is HealthSweepFunction: one sweep per scheduled event, then the
// rooms gauge (RoomsInUse per region) when the deployment keeps game
// servers' records, written as EMF to metricsOut.
func Handler(cfg config.Lifecycle, db *dynamodb.Client, log *slog.Logger, metricsOut io.Writer) func(context.Context, events.EventBridgeEvent) (lifecycle.SweepSummary, error) {
	svc := app.Lifecycle(cfg, db)
	svc.Regions, _ = healthapp.RegionHealth(db, cfg.RegionHealth) // a server that never links counts against its region
	_, servers := app.Records(db, cfg.GameInstancesTable, cfg.GameServersTable, cfg.Health.Retention)
	emf := metrics.NewEMF(metricsOut)
	return func(ctx context.Context, _ events.EventBridgeEvent) (lifecycle.SweepSummary, error) {
		ctx = logging.WithLogger(ctx, log)
		sum, err := svc.Sweep(ctx)
		if servers != nil {
			gaugeRooms(ctx, servers, emf)
		}
		return sum, err
	}
}

// gaugeRooms emits the rooms gauge; a failed read is logged, not the
// run's failure: the sweep's work is done.
func gaugeRooms(ctx context.Context, servers *store.GameServers, emf *metrics.EMF) {
	list, more, err := servers.Scan(ctx, maxGaugedServers)
	if err != nil {
		logging.FromContext(ctx).Warn("rooms gauge: reading the game servers failed", "error", err)
		return
	}
	if more {
		logging.FromContext(ctx).Warn("rooms gauge: more game servers than read; the gauge counts the first", "read", len(list))
	}
	metrics.RoomsInUse(emf, list)
}
