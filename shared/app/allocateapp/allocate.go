// Package allocateapp is AllocateFunction's composition root.
package allocateapp

import (
	"io"
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/allocators"
	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/app/healthapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi/allocationsapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
	"github.com/gamefabric-alloc/allocsvc/shared/placementqueue"
	"github.com/gamefabric-alloc/allocsvc/shared/roomcallback"
	"github.com/gamefabric-alloc/allocsvc/shared/rooms"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Clients are what the function talks to; build them once per cold start.
type Clients struct {
	DynamoDB *dynamodb.Client
	Secrets  secrets.SecretGetter
	// HTTP calls GameFabric's Allocators.
	HTTP *http.Client
	// Metrics is where EMF metric lines go (stdout in Lambda).
	Metrics io.Writer
	// SQS sends the placement queue's messages (PLACEMENT_QUEUE_URL).
	SQS placementqueue.API
}

// NewClients builds the clients from an AWS configuration.
func NewClients(awsCfg aws.Config, metrics io.Writer) Clients {
	return Clients{DynamoDB: dynamodb.NewFromConfig(awsCfg), Secrets: secretsmanager.NewFromConfig(awsCfg),
		HTTP: &http.Client{}, Metrics: metrics, SQS: sqs.NewFromConfig(awsCfg)}
}

// Handler is AllocateFunction: POST, GET and DELETE /v1/allocations.
func Handler(cfg config.Allocate, c Clients, log *slog.Logger) http.Handler {
	return httpapi.NewHandler(Routes(cfg, c), log)
}

// Routes are the function's routes, for callers that serve several
// functions' routes on one server (the tests). DELETE ends an instance
// through the lifecycle (Ender).
func Routes(cfg config.Allocate, c Clients) map[string]http.HandlerFunc {
	records, servers := app.Records(c.DynamoDB, cfg.GameInstancesTable, cfg.GameServersTable, cfg.Allocation.Retention)
	return allocationsapi.Routes(Service(cfg, c, records, servers), Ender(cfg, records, servers))
}

// Ender is the lifecycle as a backend's DELETE (or a GameLift placement's
// stop) runs it: the retention of Ended records is all the policy it
// needs, and ending a session on a shared server gives its room back.
func Ender(cfg config.Allocate, records *store.GameInstances, servers *store.GameServers) *lifecycle.Service {
	return &lifecycle.Service{Store: records, Policy: lifecycle.Policy{Health: defaults.Health{Retention: cfg.Allocation.Retention}}, Rooms: servers != nil}
}

// Service is the allocate use case as the functions run it (this one and
// PlacementFunction): rooms first when the deployment keeps game servers'
// records, then the Allocators; a placement that found no capacity waits
// in the placement queue when there is one.
func Service(cfg config.Allocate, c Clients, records *store.GameInstances, servers *store.GameServers) *allocation.Service {
	health, _ := healthapp.RegionHealth(c.DynamoDB, cfg.RegionHealth)
	var pool allocation.Rooms
	if servers != nil {
		pool = &rooms.Pool{Store: servers, Caller: roomcallback.New(nil), CallbackTimeout: cfg.RoomCallbackTimeout}
	}
	var queue allocation.Queue
	if cfg.PlacementQueueURL != "" && c.SQS != nil {
		queue = placementqueue.Queue{API: c.SQS, URL: cfg.PlacementQueueURL}
	}
	return allocation.NewService(allocation.Options{
		Queue:          queue,
		Rooms:          pool,
		Store:          records,
		Upstreams:      allocators.New(cfg, c.HTTP, c.Secrets),
		Health:         health,
		Metrics:        metrics.Allocations{EMF: metrics.NewEMF(c.Metrics)},
		Defaults:       allocation.Defaults{Request: cfg.Request},
		Allocation:     cfg.Allocation,
		BackendAddress: cfg.BackendAddress,
	})
}
