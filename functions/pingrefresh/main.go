// Command pingrefresh is the PingRefreshFunction Lambda: on an EventBridge
// schedule it copies the Ping Service's targets into the ping cache table.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadPingRefresh(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	clients := app.NewClients(config.AWS(log), os.Stdout)
	lambda.Start(app.PingRefresh(cfg, clients, log))
}
