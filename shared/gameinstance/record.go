// Package gameinstance is the kernel every part of the service shares: a
// game instance's record and states, the public error codes, and how its
// link-back token is hashed. It depends on nothing else of ours but the
// public shapes (apishape) its record's public parts are kept in.
package gameinstance

import (
	"errors"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// State is where a game instance's allocation stands.
type State = apishape.State

const (
	StateAllocating State = "Allocating" // claimed; an upstream call is in flight
	StateAllocated  State = "Allocated"  // a game server was allocated; waiting for it to link
	StateFailed     State = "Failed"     // every attempt failed; may be retried
	StateQueued     State = "Queued"     // no capacity yet; the placement queue tries again until its deadline
	StateLinked     State = "Linked"     // the game server linked back and heartbeats
	StateUnhealthy  State = "Unhealthy"  // it never linked, or stopped heartbeating; final
	StateEnded      State = "Ended"      // the game ended; final
)

// Reasons an instance became Unhealthy.
const (
	ReasonLinkTimeout      = "LinkTimeout"
	ReasonMissedHeartbeats = "MissedHeartbeats"
)

// The public parts of a record are kept in the public shapes themselves
// (apishape), so that the record, the answers, the SDKs and the events
// share one definition of each.
type (
	// LinkInfo is what a game server may report about itself when it links.
	LinkInfo = apishape.LinkInfo
	// Server is what the backend needs to send players to the game server.
	Server = apishape.Server
	// Attempt is one upstream call, or a skipped region. Status is 0 when
	// no HTTP answer arrived.
	Attempt = apishape.Attempt
	// Failure is why a Failed record failed.
	Failure = apishape.Failure
)

// Record is one game instance's allocation as stored.
type Record struct {
	GameInstanceID string
	State          State
	Fingerprint    Fingerprint
	Environment    string
	ArmadaSet      string
	Region         string
	FallbackUsed   bool
	// LatencyRelaxed: every region exceeded the latency cap, so the plan
	// fell back to the unfiltered latency ranking.
	LatencyRelaxed bool
	Server         *Server
	// Placement is how Server was found; empty while there is none (and
	// on records written before rooms, which were all PlacementAllocator).
	Placement Placement
	// RoomServer is the address of the game-server record whose room the
	// instance holds while it is live (Allocated, Linked), or may hold
	// while Allocating. Kept afterwards, it says where the session ran.
	RoomServer string
	Attempts   []Attempt
	Failure    *Failure
	// PartnerGameTokenHash is the SHA-256 of the game server's link-back
	// credential; the token itself is never stored.
	PartnerGameTokenHash string
	// CandidateTokenHashes: while Allocating, the hashes of every plan
	// step's token (the outcome decides which one is the instance's).
	CandidateTokenHashes []string
	// ClaimID identifies the invocation holding the claim; the outcome is
	// written only if the claim is still ours.
	ClaimID        string
	LeaseExpiresAt time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// ExpiresAt is the TTL; zero while the instance is live (Allocated,
	// Linked), which the health sweep watches instead.
	ExpiresAt time.Time
	// Version increases with every write; lifecycle writes are conditional
	// on it (optimistic concurrency, like a Kubernetes resourceVersion).
	Version int64

	// AllocatedAt is when the outcome Allocated was recorded; kept while
	// the instance lives on (a GameLift placement's EndTime).
	AllocatedAt time.Time
	LinkedAt    time.Time
	LinkInfo    *LinkInfo
	// RecoveredByLink: the allocation's outcome was never recorded (the
	// store failed after GameFabric answered); the game server's link-back
	// supplied it, so Server is what the server reported about itself.
	RecoveredByLink bool
	LastHeartbeatAt time.Time
	EndedAt         time.Time
	EndReason       string
	UnhealthyAt     time.Time
	UnhealthyReason string
	// HealthDeadline is when the health sweep must start to look at the
	// instance (its health index key); zero when it is not watched (every
	// state but Allocating, Queued, Allocated and Linked). A Linked
	// instance's stays put while it heartbeats: from then on the sweep
	// reads lastHeartbeatAt itself.
	HealthDeadline time.Time
	// Queue is set once the placement has been queued; kept afterwards.
	Queue *Queue
}

// IndexEntry is an instance as the health index lists it: its id and its
// key, the HealthDeadline it had when the index was read.
type IndexEntry struct {
	ID       string
	Deadline time.Time
}

// Queue is a queued placement's schedule (GameLift game session queues).
type Queue struct {
	// StartedAt is the first attempt: latency policies count from it.
	StartedAt time.Time
	// Until is the deadline (queuedUntil): not placed by then, it fails
	// with PLACEMENT_TIMED_OUT.
	Until time.Time
	// Ticket names the one queue message that may run the next attempt;
	// every other copy of a message is stale and dropped.
	Ticket string
	// NextAt is when that message is due (the Retry-After of a GET).
	NextAt time.Time
}

// Store errors.
var (
	// ErrNotFound: no record for that game instance.
	ErrNotFound = errors.New("game instance not found")
	// ErrClaimLost: the claim expired and another invocation took it over.
	ErrClaimLost = errors.New("claim lost to another invocation")
	// ErrVersionConflict: the record changed since it was read.
	ErrVersionConflict = errors.New("record changed concurrently")
	// ErrTooLarge: the record would exceed DynamoDB's item size limit; it
	// was not written.
	ErrTooLarge = errors.New("record exceeds the item size limit")
)

// ClaimConflictError is returned by Store.Claim when the game instance is
// already claimed or allocated; Existing is the record that blocked it.
type ClaimConflictError struct {
	Existing Record
}

func (e *ClaimConflictError) Error() string {
	return "game instance " + e.Existing.GameInstanceID + " is " + string(e.Existing.State)
}

// Live reports whether the instance has, or may be about to have, a game
// server: Allocating, Allocated or Linked.
func (r Record) Live() bool {
	switch r.State {
	case StateAllocating, StateAllocated, StateLinked:
		return true
	}
	return false
}

// HoldsRoom reports whether the instance holds (or, Allocating, may hold)
// a room on the game server RoomServer names: its room comes back exactly
// when a write moves it from holding to not holding.
func (r Record) HoldsRoom() bool { return r.RoomServer != "" && r.Live() }

// PlacedBy is how the instance's server was found: Placement, or
// PlacementAllocator for a server recorded before rooms existed.
func (r Record) PlacedBy() Placement {
	switch {
	case r.Server == nil:
		return ""
	case r.Placement == "":
		return PlacementAllocator
	}
	return r.Placement
}

// ClaimedBy reports whether r is the claim claimID wrote. A claim write
// whose reply was lost is retried by the SDK and fails its own condition
// against itself; this is how it knows.
func (r Record) ClaimedBy(claimID string) bool {
	return claimID != "" && r.ClaimID == claimID
}

// FinishedBy reports whether r holds the outcome (state) claimID recorded,
// or what an Allocated outcome became since: its server linked, ended or
// went silent. Only the claim's holder moves a record with its claim id out
// of Allocating while the lease runs, and the budget ends well before it.
func (r Record) FinishedBy(claimID string, outcome State) bool {
	if !r.ClaimedBy(claimID) {
		return false
	}
	switch r.State {
	case outcome:
		return true
	case StateLinked, StateEnded, StateUnhealthy:
		return outcome == StateAllocated
	}
	return false
}

// Fingerprint is what must match for a replay to count as the same request.
type Fingerprint struct {
	DesiredRegion     string
	GameServerVersion string
	ServerArgs        string
	// RegionInputs digests preferredRegions, playerLatencies and
	// maxPlayerLatencyMs; empty when none is given, as in older records.
	RegionInputs string
	// Scheduling is "" for the default (Packed), so records written
	// before rooms match their replays.
	Scheduling Scheduling
	Dedicated  bool
	// Match: the instance is a FlexMatch match's (its id is the matchId),
	// so no API request is the same request, and its failure is final.
	Match bool
	// GameLift digests what a GameLift game session placement was asked
	// (its queue and game session; see GameSessionPlacement); "" for any
	// other instance. Like Match, it keeps API requests apart and makes
	// the placement's failure final: a PlacementId is never reused.
	GameLift string
}
