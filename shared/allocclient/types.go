package allocclient

import (
	"slices"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// The states of a game instance (the "state" of an Allocation).
const (
	StateAllocating = "Allocating" // claimed; an upstream call is in flight
	StateAllocated  = "Allocated"  // a game server was allocated; waiting for it to link
	StateFailed     = "Failed"     // every attempt failed; Allocate again to retry
	StateQueued     = "Queued"     // no capacity yet; the service tries again until QueuedUntil
	StateLinked     = "Linked"     // the game server linked back and heartbeats
	StateUnhealthy  = "Unhealthy"  // it never linked, or stopped heartbeating; final
	StateEnded      = "Ended"      // the game ended; final
)

// Scheduling orders (AllocateRequest.Scheduling) and placements
// (Allocation.Placement, Attempt.Placement).
const (
	SchedulingPacked      = "Packed"
	SchedulingDistributed = "Distributed"
	PlacementRoom         = "room"      // a free room on a game server that offered rooms
	PlacementAllocator    = "allocator" // a whole game server from GameFabric's Allocator
)

// The request's shapes are the service's own (apishape), as the service
// decodes them: String and LogValue keep the tokens out of prints and logs.
type (
	// AllocateRequest is the body of POST /v1/allocations. GameInstanceID
	// is the idempotency key: a retry with the same one never allocates
	// twice. Empty fields are left out, which the service reads as "not
	// given".
	AllocateRequest = apishape.AllocateRequest
	// LatencyPolicy is one step of AllocateRequest.LatencyPolicies.
	LatencyPolicy = apishape.LatencyPolicy
	// PlayerLatency is one player's measured latency per region, from
	// pinging the targets GET /v1/regions lists.
	PlayerLatency = apishape.PlayerLatency
)

// The answers' shapes are the service's own (apishape), defined once for
// the handlers, this SDK, the game-server SDK and docs/openapi.yaml.
type (
	// Allocation is a game instance as the allocation routes answer it,
	// with what the answer's status and Retry-After said (Created,
	// RetryAfter). State is one of the State constants, Placement one of
	// the Placement ones.
	Allocation = apishape.Allocation
	// Lifecycle is what the game server reported and the health sweep
	// found (an Allocation's LinkedAt … UnhealthyReason).
	Lifecycle = apishape.Lifecycle
	// Server is where the backend sends its players.
	Server = apishape.Server
	// LinkInfo is what the game server reported about itself when it linked.
	LinkInfo = apishape.LinkInfo
	// Attempt is one region of the plan: asked (Status is GameFabric's
	// answer, 0 when none arrived) or skipped (Error says why).
	Attempt = apishape.Attempt
	// Failure is why a Failed allocation failed.
	Failure = apishape.Failure
)

// The answer of GET /v1/regions.
type (
	// Regions is the answer of GET /v1/regions.
	Regions = apishape.Regions
	// Region is one region a game may be allocated in, with the targets
	// its players ping to measure their latency.
	Region = apishape.Region
	// PingTarget is one address a game client pings.
	PingTarget = apishape.PingTarget
)

// cloneRegions is a copy the caller may change without touching the
// client's cache.
func cloneRegions(r *Regions) *Regions {
	out := &Regions{Regions: make([]Region, len(r.Regions))}
	for i, reg := range r.Regions {
		reg.PingTargets = slices.Clone(reg.PingTargets)
		out.Regions[i] = reg
	}
	return out
}
