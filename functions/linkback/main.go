// Command linkback is the LinkBackFunction Lambda: a game server's link,
// heartbeat and end (POST /v1/game-instances/{gameInstanceId}/...) behind
// an HTTP API (payload 2.0), authenticated by its PartnerGameToken.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadLifecycle(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	clients := app.NewClients(config.AWS(log), os.Stdout)
	lambda.Start(httpadapter.NewV2(app.LinkBack(cfg, clients, log)).ProxyWithContext)
}
