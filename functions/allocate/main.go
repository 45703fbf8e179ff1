// Command allocate is the AllocateFunction Lambda: POST /v1/allocations,
// GET and DELETE /v1/allocations/{gameInstanceId} behind an HTTP API
// (payload 2.0).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func main() {
	cfg := config.Must(config.LoadAllocate(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	clients := allocateapp.NewClients(config.AWS(log), os.Stdout)
	lambda.Start(httpadapter.NewV2(allocateapp.Handler(cfg, clients, log)).ProxyWithContext)
}
