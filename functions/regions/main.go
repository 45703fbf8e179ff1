// Command regions is the RegionsFunction Lambda: GET /v1/regions from the
// ping cache behind an HTTP API (payload 2.0).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/app/regionsapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadRegions(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	db := dynamodb.NewFromConfig(config.AWS(log))
	lambda.Start(httpadapter.NewV2(regionsapp.Handler(cfg, db, log)).ProxyWithContext)
}
