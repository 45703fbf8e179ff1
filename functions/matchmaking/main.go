// Command matchmaking is the MatchmakingFunction Lambda: FlexMatch's
// MatchmakingSucceeded events in (MatchmakingRule), each match's game
// server allocated exactly once.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/app/matchmakingapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadMatchmaking(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	clients := matchmakingapp.NewClients(awsCfg, allocateapp.NewClients(awsCfg, os.Stdout))
	lambda.Start(matchmakingapp.Handler(matchmakingapp.Service(cfg, clients), log))
}
