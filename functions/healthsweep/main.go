// Command healthsweep is the HealthSweepFunction Lambda: on a schedule it
// marks game instances that never linked or stopped heartbeating Unhealthy.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

func main() {
	cfg := config.Must(config.LoadLifecycle(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	db := dynamodb.NewFromConfig(awsCfg)
	svc := &lifecycle.Service{
		Store:  store.NewGameInstances(db, cfg.GameInstancesTable),
		Policy: lifecycle.PolicyFrom(cfg),
	}
	if b := regionhealth.BreakerFor(db, cfg.RegionHealth); b != nil {
		svc.Regions = b
	}
	lambda.Start(svc.SweepHandler(log))
}
