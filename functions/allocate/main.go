// Command allocate is the AllocateFunction Lambda: POST /v1/allocations and
// GET /v1/allocations/{gameInstanceId} behind an HTTP API (payload 2.0).
package main

import (
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/allocators"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

func main() {
	cfg := config.Must(config.LoadAllocate(os.Getenv))
	log := logging.New(os.Stdout, cfg.LogLevel)
	awsCfg := config.AWS(log)

	db := dynamodb.NewFromConfig(awsCfg)
	records := store.NewGameInstances(db, cfg.GameInstancesTable)
	// A nil *Breaker must not become a non-nil interface.
	var health allocation.RegionHealth
	if b := regionhealth.BreakerFor(db, cfg.RegionHealth); b != nil {
		health = b
	}
	opts := allocation.OptionsFrom(cfg)
	opts.Store, opts.Health = records, health
	opts.Upstreams = allocators.New(cfg, &http.Client{}, secretsmanager.NewFromConfig(awsCfg), nil)
	opts.Metrics = metrics.Allocations{EMF: metrics.NewEMF(os.Stdout)}
	svc := allocation.NewService(opts)
	// DELETE ends an instance; the retention of Ended records is all the
	// lifecycle policy it needs.
	ender := &lifecycle.Service{Store: records, Policy: lifecycle.Policy{Retention: cfg.RecordRetention}}
	lambda.Start(httpadapter.NewV2(httpapi.NewAllocateHandler(svc, ender, log)).ProxyWithContext)
}
