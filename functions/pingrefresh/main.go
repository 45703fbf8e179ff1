// Command pingrefresh is the PingRefreshFunction Lambda: on an EventBridge
// schedule it copies the Ping Service's targets into the ping cache table.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/shared/app/pingapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
)

func main() {
	cfg := config.Must(config.LoadPingRefresh(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	lambda.Start(pingapp.PingRefresh(cfg, dynamodb.NewFromConfig(awsCfg), secretsmanager.NewFromConfig(awsCfg), metrics.NewEMF(os.Stdout), log))
}
