// Command regions is the RegionsFunction Lambda: GET /v1/regions serves the
// ping cache behind the HTTP API (payload 2.0).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

func main() {
	cfg := config.Must(config.LoadRegions(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	db := dynamodb.NewFromConfig(awsCfg)
	cache := store.NewPingCache(db, cfg.Table)
	var health httpapi.HealthLister
	if b := regionhealth.BreakerFor(db, cfg.RegionHealth); b != nil {
		health = b.Store
	}
	lambda.Start(httpadapter.NewV2(httpapi.NewRegionsHandler(cache, health, cfg.Period, log)).ProxyWithContext)
}
