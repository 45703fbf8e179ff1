package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// pingFetchTimeout bounds one call to the Ping Service; the function's
// timeout is 60 s.
const pingFetchTimeout = 20 * time.Second

// PingRefresh is PingRefreshFunction: one refresh of the ping cache per
// scheduled event, logged with the Lambda request id.
func PingRefresh(cfg config.PingRefresh, c Clients, log *slog.Logger) func(context.Context, events.EventBridgeEvent) (pingcache.Summary, error) {
	regions, _ := regionHealth(c.DynamoDB, cfg.RegionHealth)
	client := *c.HTTP
	client.Timeout = pingFetchTimeout
	r := &pingcache.Refresher{
		Source: gamefabric.NewPingClient(&client, cfg.PingURL()),
		Tokens: secrets.NewTokenSource(c.Secrets, cfg.TokenSecretID, cfg.TokenCacheTTL, nil),
		Store:  store.NewPingCache(c.DynamoDB, cfg.Table),
		Zones:  cfg.ZonesByRegion,
		Period: cfg.Period,
		Health: regions,
	}
	return func(ctx context.Context, _ events.EventBridgeEvent) (pingcache.Summary, error) {
		ctx = logging.WithLogger(ctx, log)
		s, err := r.Refresh(ctx)
		if err != nil {
			logging.FromContext(ctx).Error("ping cache refresh failed; the cache was left as it was", "error", err)
		}
		return s, err
	}
}

// Regions is RegionsFunction: GET /v1/regions from the ping cache, with
// region health when it is on.
func Regions(cfg config.Regions, c Clients, log *slog.Logger) http.Handler {
	var health httpapi.HealthLister // nil: health is left out of the answer
	if _, b := regionHealth(c.DynamoDB, cfg.RegionHealth); b != nil {
		health = b
	}
	return httpapi.NewRegionsHandler(store.NewPingCache(c.DynamoDB, cfg.Table), health, cfg.Period, log)
}
