package allocclient

import (
	"fmt"
	"log/slog"
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

// AllocateRequest is the body of POST /v1/allocations. GameInstanceID is
// the idempotency key: a retry with the same one never allocates twice.
// Empty fields are left out, which the service reads as "not given".
type AllocateRequest struct {
	GameInstanceID string `json:"gameInstanceId"`
	// DesiredRegion is shorthand for PreferredRegions of one; give one or the other.
	DesiredRegion     string `json:"desiredRegion,omitempty"`
	GameServerVersion string `json:"gameServerVersion,omitempty"` // "<environment>::<armadaSet>"
	ServerArgs        string `json:"serverArgs,omitempty"`
	// PartnerGameToken is the game server's link-back credential; empty
	// has one minted per region attempted (the safer choice).
	PartnerGameToken   string   `json:"partnerGameToken,omitempty"`
	PartnerSocialToken string   `json:"partnerSocialToken,omitempty"`
	PreferredRegions   []string `json:"preferredRegions,omitempty"`
	// PlayerLatencies rank the regions when none is requested.
	PlayerLatencies    []PlayerLatency `json:"playerLatencies,omitempty"`
	MaxPlayerLatencyMs *float64        `json:"maxPlayerLatencyMs,omitempty"`
	// Scheduling orders the game servers with a free room: SchedulingPacked
	// (the default, fewest free rooms first) or SchedulingDistributed.
	Scheduling string `json:"scheduling,omitempty"`
	// Dedicated asks for a whole game server, never a room on a shared one.
	Dedicated bool `json:"dedicated,omitempty"`
	// QueueTimeoutSeconds (0–600) lets a placement that found no capacity
	// wait for it: the answer is then 202 and StateQueued (AllocateAndWait
	// follows it). nil takes the deployment's QUEUE_TIMEOUT; 0 fails fast.
	QueueTimeoutSeconds *int `json:"queueTimeoutSeconds,omitempty"`
	// LatencyPolicies relax the players' latency cap over a queued
	// placement's life (GameLift's PlayerLatencyPolicies); they need
	// PlayerLatencies and exclude MaxPlayerLatencyMs.
	LatencyPolicies []LatencyPolicy `json:"latencyPolicies,omitempty"`
}

// LatencyPolicy is one step of AllocateRequest.LatencyPolicies: no player
// above MaxPlayerLatencyMs in a region asked, for DurationSeconds from the
// previous step's end. Only the last step may leave DurationSeconds nil
// (the cap then holds until the queue timeout); caps must increase.
type LatencyPolicy struct {
	MaxPlayerLatencyMs float64 `json:"maxPlayerLatencyMs"`
	DurationSeconds    *int    `json:"durationSeconds,omitempty"`
}

// Scheduling orders (AllocateRequest.Scheduling) and placements
// (Allocation.Placement, Attempt.Placement).
const (
	SchedulingPacked      = "Packed"
	SchedulingDistributed = "Distributed"
	PlacementRoom         = "room"      // a free room on a game server that offered rooms
	PlacementAllocator    = "allocator" // a whole game server from GameFabric's Allocator
)

// String keeps the tokens out of anything that prints a request with %v.
func (r AllocateRequest) String() string {
	return fmt.Sprintf("{gameInstanceId:%s desiredRegion:%s gameServerVersion:%s preferredRegions:%v players:%d partnerGameToken:%s partnerSocialToken:%s}",
		r.GameInstanceID, r.DesiredRegion, r.GameServerVersion, r.PreferredRegions, len(r.PlayerLatencies),
		redacted(r.PartnerGameToken), redacted(r.PartnerSocialToken))
}

// LogValue keeps the tokens out of slog lines.
func (r AllocateRequest) LogValue() slog.Value {
	return slog.GroupValue(slog.String("gameInstanceId", r.GameInstanceID), slog.String("desiredRegion", r.DesiredRegion),
		slog.String("gameServerVersion", r.GameServerVersion), slog.Any("preferredRegions", r.PreferredRegions),
		slog.Int("players", len(r.PlayerLatencies)), slog.String("partnerGameToken", redacted(r.PartnerGameToken)),
		slog.String("partnerSocialToken", redacted(r.PartnerSocialToken)))
}

func redacted(token string) string {
	if token == "" {
		return ""
	}
	return "[redacted]"
}

// PlayerLatency is one player's measured latency per region, from pinging
// the targets GET /v1/regions lists.
type PlayerLatency struct {
	PlayerID  string             `json:"playerId"`
	LatencyMs map[string]float64 `json:"latencyMs"`
}

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
