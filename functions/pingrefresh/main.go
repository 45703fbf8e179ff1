// Command pingrefresh is the PingRefreshFunction Lambda: on an EventBridge
// schedule it copies GameFabric's ping targets into the ping cache table.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// fetchTimeout bounds one ping-discovery call; the function timeout is 60 s.
const fetchTimeout = 20 * time.Second

func main() {
	cfg, err := config.LoadPingRefresh(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg, err := awsconfig.LoadDefaultConfig(context.Background(), awsconfig.WithLogger(logging.SDKLogger(log)))
	if err != nil {
		log.Error("load AWS configuration", "error", err)
		os.Exit(1)
	}
	refresher := &pingcache.Refresher{
		Source: gamefabric.NewPingClient(&http.Client{Timeout: fetchTimeout}, cfg.PingURL()),
		Tokens: secrets.NewTokenSource(secretsmanager.NewFromConfig(awsCfg), cfg.TokenSecretID, cfg.TokenCacheTTL, nil),
		Store:  store.NewPingCache(dynamodb.NewFromConfig(awsCfg), cfg.Table),
		Zones:  cfg.ZonesByRegion,
		Period: cfg.Period,
	}
	lambda.Start(refresher.Handler(log))
}
