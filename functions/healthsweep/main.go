// Command healthsweep is the HealthSweepFunction Lambda: on an EventBridge
// schedule it marks game instances past their link or heartbeat deadline
// Unhealthy.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadLifecycle(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	clients := app.NewClients(config.AWS(log), os.Stdout)
	lambda.Start(app.HealthSweep(cfg, clients, log))
}
