// Command linkback is the LinkBackFunction Lambda: the routes game servers
// call with their PartnerGameToken to link, heartbeat and end.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

func main() {
	cfg := config.Must(config.LoadLifecycle(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)
	svc := &lifecycle.Service{
		Store:  store.NewGameInstances(dynamodb.NewFromConfig(awsCfg), cfg.GameInstancesTable),
		Policy: lifecycle.PolicyFrom(cfg),
	}
	lambda.Start(httpadapter.NewV2(httpapi.NewLinkBackHandler(svc, log)).ProxyWithContext)
}
