package app

import (
	"log/slog"
	"net/http"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/allocators"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Allocate is AllocateFunction: POST, GET and DELETE /v1/allocations.
func Allocate(cfg config.Allocate, c Clients, log *slog.Logger) http.Handler {
	return httpapi.NewAllocateHandler(AllocationService(cfg, c), allocationEnder(cfg, c), log)
}

// AllocateRoutes are Allocate's routes, for callers that serve several
// functions' routes on one server (the tests).
func AllocateRoutes(cfg config.Allocate, c Clients) map[string]http.HandlerFunc {
	return httpapi.AllocateRoutes(AllocationService(cfg, c), allocationEnder(cfg, c))
}

// AllocationService is the allocate use case as the function runs it.
func AllocationService(cfg config.Allocate, c Clients) *allocation.Service {
	health, _ := regionHealth(c.DynamoDB, cfg.RegionHealth)
	return allocation.NewService(allocation.Options{
		Store:     store.NewGameInstances(c.DynamoDB, cfg.GameInstancesTable),
		Upstreams: allocators.New(cfg, c.HTTP, c.Secrets, nil),
		Health:    health,
		Metrics:   metrics.Allocations{EMF: metrics.NewEMF(c.Metrics)},
		Defaults: allocation.Defaults{Region: cfg.FallbackRegion, Environment: cfg.FallbackEnvironment, ArmadaSet: cfg.FallbackArmadaSet,
			MaxAttempts: cfg.MaxAllocationAttempts, MaxPlayerLatencyMs: cfg.MaxPlayerLatencyMs},
		BackendAddress: cfg.BackendAddress,
		AttemptTimeout: cfg.AttemptTimeout,
		Lease:          cfg.AllocationLease,
		Retention:      cfg.RecordRetention,
		LinkTimeout:    cfg.LinkTimeout,
		Budget:         cfg.AllocationBudget,
	})
}

// allocationEnder serves DELETE: the retention of Ended records is all the
// lifecycle policy it needs.
func allocationEnder(cfg config.Allocate, c Clients) *lifecycle.Service {
	return &lifecycle.Service{Store: store.NewGameInstances(c.DynamoDB, cfg.GameInstancesTable),
		Policy: lifecycle.Policy{Retention: cfg.RecordRetention}}
}
