// Command healthsweep is the HealthSweepFunction Lambda: on a schedule it
// marks game instances that never linked or stopped heartbeating Unhealthy.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

func main() {
	cfg, err := config.LoadLifecycle(os.Getenv)
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
	svc := &lifecycle.Service{
		Store:  store.NewGameInstances(dynamodb.NewFromConfig(awsCfg), cfg.GameInstancesTable),
		Policy: lifecycle.PolicyFrom(cfg),
	}
	lambda.Start(svc.SweepHandler(log))
}
