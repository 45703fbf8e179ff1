// Command gameliftapi is the GameLiftApiFunction Lambda: GameLift's game
// session placement API (StartGameSessionPlacement,
// DescribeGameSessionPlacement, StopGameSessionPlacement) behind its
// function URL, in AWS JSON 1.1 and Smithy RPC v2 CBOR, SigV4-checked.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/app/gameliftapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadGameLiftAPI(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	clients := allocateapp.NewClients(awsCfg, os.Stdout)
	lambda.Start(gameliftapp.Handler(gameliftapp.API(cfg, clients, awsCfg.Region), log))
}
