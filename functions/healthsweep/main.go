// Command healthsweep is the HealthSweepFunction Lambda: on an EventBridge
// schedule it marks game instances past their link or heartbeat deadline
// Unhealthy.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/app/sweepapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadLifecycle(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	db := dynamodb.NewFromConfig(config.AWS(log))
	lambda.Start(sweepapp.Handler(cfg, db, log, os.Stdout))
}
