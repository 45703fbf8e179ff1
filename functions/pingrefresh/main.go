// Command pingrefresh is the PingRefreshFunction Lambda: on an EventBridge
// schedule it copies the GameFabric Ping Service's targets into the ping
// cache table.
package main

import (
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// fetchTimeout bounds one Ping Service call; the function timeout is 60 s.
const fetchTimeout = 20 * time.Second

func main() {
	cfg := config.Must(config.LoadPingRefresh(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	db := dynamodb.NewFromConfig(awsCfg)
	refresher := &pingcache.Refresher{
		Source: gamefabric.NewPingClient(&http.Client{Timeout: fetchTimeout}, cfg.PingURL()),
		Tokens: secrets.NewTokenSource(secretsmanager.NewFromConfig(awsCfg), cfg.TokenSecretID, cfg.TokenCacheTTL, nil),
		Store:  store.NewPingCache(db, cfg.Table),
		Zones:  cfg.ZonesByRegion,
		Period: cfg.Period,
	}
	if b := regionhealth.BreakerFor(db, cfg.RegionHealth); b != nil {
		refresher.Health = b.Store
	}
	lambda.Start(refresher.Handler(log))
}
