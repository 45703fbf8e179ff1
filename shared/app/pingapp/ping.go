// Package pingapp is PingRefreshFunction's composition root.
package pingapp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
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
func PingRefresh(cfg config.PingRefresh, db *dynamodb.Client, sm secrets.SecretGetter, log *slog.Logger) func(context.Context, events.EventBridgeEvent) (pingcache.Summary, error) {
	regions, _ := app.RegionHealth(db, cfg.RegionHealth)
	r := &pingcache.Refresher{
		Source: gamefabric.NewPingClient(&http.Client{Timeout: pingFetchTimeout}, cfg.PingURL()),
		Tokens: secrets.NewTokenSource(sm, cfg.TokenSecretID, cfg.TokenCacheTTL, nil),
		Store:  store.NewPingCache(db, cfg.Table),
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
