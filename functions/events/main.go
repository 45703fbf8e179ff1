// Command events is the EventsFunction Lambda: DynamoDB Streams of the
// game-instance and region-health tables in, lifecycle events on the
// GameServerEventBus out (docs/events.md).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/gamefabric-alloc/allocsvc/shared/app/eventsapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
)

func main() {
	cfg := config.Must(config.LoadEvents(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	kept := eventsapp.KeptIn(dynamodb.NewFromConfig(awsCfg), cfg)
	lambda.Start(eventsapp.Handler(cfg, eventbridge.NewFromConfig(awsCfg), kept, metrics.NewEMF(os.Stdout), log))
}
