// Command linkback is the LinkBackFunction Lambda: a game server's link,
// heartbeat and end (POST /v1/game-instances/{gameInstanceId}/...) behind
// an HTTP API (payload 2.0), authenticated by its PartnerGameToken.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/app/linkbackapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadLifecycle(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	db := dynamodb.NewFromConfig(config.AWS(log))
	lambda.Start(httpadapter.NewV2(linkbackapp.Handler(cfg, db, log)).ProxyWithContext)
}
