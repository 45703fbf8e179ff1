// Package pingapp is PingRefreshFunction's composition root.
package pingapp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/app/healthapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store/pingtable"
)

// pingFetchTimeout bounds one call to the Ping Service; the function's
// timeout is 60 s.
const pingFetchTimeout = 20 * time.Second

// PingRefresh is PingRefreshFunction: one refresh of the ping cache per
// scheduled event, logged with the Lambda request id.
func PingRefresh(cfg config.PingRefresh, db *dynamodb.Client, sm secrets.SecretGetter, emf *metrics.EMF, log *slog.Logger) func(context.Context, events.EventBridgeEvent) (pingcache.Summary, error) {
	regions, breaker := healthapp.RegionHealth(db, cfg.RegionHealth)
	r := &pingcache.Refresher{
		Source:   gamefabric.NewPingClient(&http.Client{Timeout: pingFetchTimeout}, cfg.PingURL()),
		Tokens:   secrets.NewTokenSource(sm, cfg.TokenSecretID, cfg.TokenCacheTTL, nil),
		Store:    pingtable.New(db, cfg.Table),
		Zones:    cfg.ZonesByRegion,
		Unpinged: cfg.AgonesRegions,
		Period:   cfg.Period,
		Health:   regions,
	}
	return func(ctx context.Context, _ events.EventBridgeEvent) (pingcache.Summary, error) {
		ctx = logging.WithLogger(ctx, log)
		s, err := r.Refresh(ctx)
		if err != nil {
			logging.FromContext(ctx).Error("ping cache refresh failed; the cache was left as it was", "error", err)
		}
		gaugeUnhealthy(ctx, breaker, emf)
		return s, err
	}
}

// gaugeUnhealthy emits UnhealthyRegions on every run, whatever the
// refresh did: a gauge the RegionUnhealthyAlarm holds for as long as any
// region stays Unhealthy (a change event alone would let it clear).
func gaugeUnhealthy(ctx context.Context, breaker *regionhealth.Breaker, emf *metrics.EMF) {
	if breaker == nil {
		return
	}
	unhealthy, err := breaker.Unhealthy(ctx)
	if err != nil {
		logging.FromContext(ctx).Warn("reading region health for the UnhealthyRegions metric failed", "error", err)
		return
	}
	if len(unhealthy) > 0 {
		logging.FromContext(ctx).Warn("regions are Unhealthy", "regions", unhealthy)
	}
	emf.Emit(nil, metrics.Metric{Name: "UnhealthyRegions", Value: float64(len(unhealthy)), Unit: "Count"})
}
