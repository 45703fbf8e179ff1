// Command regions is the RegionsFunction Lambda: GET /v1/regions serves the
// ping cache behind the HTTP API (payload 2.0).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

func main() {
	cfg, err := config.LoadRegions(os.Getenv)
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
	cache := store.NewPingCache(dynamodb.NewFromConfig(awsCfg), cfg.Table)
	lambda.Start(httpadapter.NewV2(httpapi.NewRegionsHandler(cache, cfg.Period, log)).ProxyWithContext)
}
