// Package app holds what the composition roots share. Each function has
// its own root under shared/app (allocateapp, linkbackapp, sweepapp,
// pingapp, regionsapp) that turns its configuration and AWS clients into the
// handler main.go starts; the bench and the tests build through them too.
// They are separate packages so that each binary links only what its
// function uses: an SDK client package's init runs on every cold start.
package app

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Lifecycle is the game-instance lifecycle as LinkBackFunction and
// HealthSweepFunction run it (the sweep adds region health, which hears
// of link timeouts: healthapp).
func Lifecycle(cfg config.Lifecycle, db *dynamodb.Client) *lifecycle.Service {
	records, rooms := Records(db, cfg.GameInstancesTable, cfg.GameServersTable, cfg.Health.Retention)
	return &lifecycle.Service{
		Store:               records,
		Policy:              lifecycle.Policy{Health: cfg.Health},
		Rooms:               rooms != nil,
		ReadBeforeHeartbeat: cfg.HeartbeatInterval < cfg.Health.Period,
	}
}

// Records are the game instances' records, writing the rooms they hold to
// the game servers' records when the deployment keeps them (serversTable
// set; rooms is nil otherwise).
func Records(db *dynamodb.Client, instancesTable, serversTable string, retention time.Duration) (records *store.GameInstances, rooms *store.GameServers) {
	records = store.NewGameInstances(db, instancesTable)
	if serversTable == "" {
		return records, nil
	}
	rooms = store.NewGameServers(db, serversTable, instancesTable, retention)
	return records.WithRooms(rooms), rooms
}
