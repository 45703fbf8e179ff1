// Package eventcatalog is the catalogue of events the service publishes:
// which stored change becomes which event, and what the event says. It is
// pure: the images of a record before and after a write go in, events come
// out. Deriving events from the stored images (DynamoDB Streams) rather
// than from the request path means every transition that was stored
// produces its event, and nothing that was not stored ever does.
package eventcatalog

import (
	"encoding/json"
	"time"
)

// Source is every event's EventBridge source.
const Source = "gamefabric.allocation"

// DetailType is an event's EventBridge detail-type.
type DetailType string

// The catalogue (docs/events.md).
const (
	// AllocationQueued: a placement found no capacity and waits in the
	// placement queue (once per placement, when first queued).
	AllocationQueued      DetailType = "AllocationQueued"
	GameServerAllocated   DetailType = "GameServerAllocated"
	AllocationFailed      DetailType = "AllocationFailed"
	GameServerLinked      DetailType = "GameServerLinked"
	GameInstanceEnded     DetailType = "GameInstanceEnded"
	GameInstanceUnhealthy DetailType = "GameInstanceUnhealthy"
	SuspectedOrphan       DetailType = "SuspectedOrphan"
	RegionHealthChanged   DetailType = "RegionHealthChanged"
)

// DetailTypes lists the catalogue in the order docs/events.md presents it.
var DetailTypes = []DetailType{AllocationQueued, GameServerAllocated, AllocationFailed, GameServerLinked, GameInstanceEnded,
	GameInstanceUnhealthy, SuspectedOrphan, RegionHealthChanged}

// Event is one entry for the bus. Exactly one of Instance, Region, Match
// and Placement is set.
type Event struct {
	Type DetailType
	// Time is when the change was stored (EventBridge's event time).
	Time     time.Time
	Instance *InstanceDetail
	Region   *RegionDetail
	// Match is a placed FlexMatch match's event, published again.
	Match *MatchDetail
	// Placement is a GameLift placement's end, as GameLift publishes it.
	Placement *PlacementDetail
	// Resources are the event's resources' ARNs (a placement's queue).
	Resources []string
	// LinkTime is, on a GameServerLinked event after Allocated, how long
	// the server took to link (zero otherwise): the LinkTime metric.
	LinkTime time.Duration
}

// Key is the event's idempotency key: the same stored change always yields
// the same key, so consumers drop the duplicates at-least-once delivery
// brings by remembering keys.
func (e Event) Key() string {
	switch {
	case e.Instance != nil:
		return e.Instance.IdempotencyKey
	case e.Match != nil:
		return e.Match.IdempotencyKey
	case e.Placement != nil:
		return e.Placement.IdempotencyKey
	}
	return e.Region.IdempotencyKey
}

// Subject is what the event is about: a game instance id or a region.
func (e Event) Subject() string {
	switch {
	case e.Instance != nil:
		return e.Instance.GameInstanceID
	case e.Match != nil:
		return e.Match.MatchID
	case e.Placement != nil:
		return e.Placement.PlacementID
	}
	return e.Region.Region
}

// Detail is the event's detail as JSON.
func (e Event) Detail() ([]byte, error) {
	switch {
	case e.Instance != nil:
		return json.Marshal(e.Instance)
	case e.Match != nil:
		return e.Match.Body, nil
	case e.Placement != nil:
		return json.Marshal(e.Placement)
	}
	return json.Marshal(e.Region)
}

// timestamp is t as events show it: RFC 3339 in UTC, "" (omitted) for zero.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
