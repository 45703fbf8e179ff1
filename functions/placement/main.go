// Command placement is the PlacementFunction Lambda: the placement queue's
// SQS messages in, each a queued placement's next attempt (batch item
// failures back to the event source mapping).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/app/placementapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadAllocate(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	handler := config.Must(placementapp.New(cfg, allocateapp.NewClients(config.AWS(log), os.Stdout), log))
	lambda.Start(handler)
}
