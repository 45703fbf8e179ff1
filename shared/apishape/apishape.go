// Package apishape holds the service's public JSON shapes, each defined
// once: the allocation request (AllocateRequest, request.go), the
// allocation record the allocation routes answer (Allocation), a game
// server's answer on the link-back routes (GameServerState), the regions
// list (Regions), an error answer (ErrorResponse) and their parts
// (Attempt, Server, LinkInfo, Failure, Lifecycle, Session). The handlers
// decode and build them (shared/allocation, shared/httpapi), the two SDKs
// send and decode them (allocclient and gameserver alias them), the
// domain's record keeps its public parts in them (gameinstance aliases
// State, Code, Placement, Attempt, Server, LinkInfo and Failure), the event
// detail reuses those parts (shared/eventcatalog), and a test holds
// docs/openapi.yaml to every shape field by field
// (tests/contract_shapes_test.go). It imports only the standard library,
// so an SDK links nothing of the service's domain or AWS through it.
//
// Times are time.Time with omitzero: encoding/json writes them as RFC 3339
// with nanoseconds (trailing zeros trimmed) in their location, so whoever
// builds a shape for an answer gives them in UTC.
package apishape

import "time"

// State is where a game instance's allocation stands: Allocating,
// Allocated, Failed, Queued, Linked, Unhealthy or Ended (the constants are
// gameinstance's, and the SDKs').
type State string

// Code is an error code: the "code" of an error answer or of a Failed
// allocation's error (the constants are gameinstance's, and the SDKs').
type Code string

// Placement is how an allocation got its game server: "room" (a free room
// on a game server that offered rooms) or "allocator" (a whole server from
// GameFabric's Allocator).
type Placement string

// AllocatorKind is the kind of Allocator an attempt asked: a GameFabric
// Allocator or an Agones allocator service (GAMEFABRIC_ALLOCATORS' "kind").
type AllocatorKind string

// The Allocator kinds.
const (
	AllocatorGameFabric AllocatorKind = "gamefabric"
	AllocatorAgones     AllocatorKind = "agones"
)

// Allocation is a game instance as the allocation routes answer it
// (docs/openapi.yaml, Allocation): never its tokens, hashes or claim.
type Allocation struct {
	GameInstanceID string `json:"gameInstanceId"`
	State          State  `json:"state"`
	// Region is the region that allocated the server; empty until then,
	// and after an allocation recovered by link.
	Region string `json:"region,omitempty"`
	// FallbackUsed: the fallback region served it, after the requested or
	// preferred regions failed.
	FallbackUsed bool `json:"fallbackUsed"`
	// LatencyFilterRelaxed: every region exceeded the latency cap, so the
	// plan used the unfiltered latency ranking.
	LatencyFilterRelaxed bool    `json:"latencyFilterRelaxed,omitempty"`
	Server               *Server `json:"server,omitempty"`
	// Placement is how Server was found: "room" (a room on a game server
	// hosting other sessions too) or "allocator"; empty without a server.
	Placement Placement `json:"placement,omitempty"`
	// Attempts is the decision trace: every region asked or skipped, in
	// order (never null in an answer).
	Attempts []Attempt `json:"attempts"`
	// Error is why a Failed allocation failed.
	Error *Failure `json:"error,omitempty"`
	// QueuedUntil is the deadline of a placement that was ever queued
	// (kept once it is Allocated or Failed): not placed by then, it fails
	// with PLACEMENT_TIMED_OUT.
	QueuedUntil time.Time `json:"queuedUntil,omitzero"`
	CreatedAt   time.Time `json:"createdAt,omitzero"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
	// Lifecycle is what the game server reported and the health sweep found.
	Lifecycle

	// Created and RetryAfter are what allocclient read from the answer's
	// status and headers; they are never in the JSON, and the service
	// leaves them zero.
	//
	// Created: this Allocate call allocated the server (201 Created);
	// false for a replay of a finished allocation (200), for a queued
	// placement (202) and for Get and End.
	Created bool `json:"-"`
	// RetryAfter is the answer's Retry-After: when to look again at a
	// Queued placement (202 to Allocate, 200 to Get); 0 when it had none.
	RetryAfter time.Duration `json:"-"`
}

// Lifecycle is what the game server reported (link, heartbeats, end) and
// what the health sweep found; both Allocation and GameServerState carry it.
type Lifecycle struct {
	LinkedAt time.Time `json:"linkedAt,omitzero"`
	// LinkedServer is what the game server reported about itself when it linked.
	LinkedServer *LinkInfo `json:"linkedServer,omitempty"`
	// RecoveredByLink: the allocation's outcome was never recorded; the
	// server's link supplied it, so Server is what the server reported.
	RecoveredByLink bool      `json:"recoveredByLink,omitempty"`
	LastHeartbeatAt time.Time `json:"lastHeartbeatAt,omitzero"`
	EndedAt         time.Time `json:"endedAt,omitzero"`
	// EndReason is EndedByBackend (DELETE) or the game server's reason.
	EndReason   string    `json:"endReason,omitempty"`
	UnhealthyAt time.Time `json:"unhealthyAt,omitzero"`
	// UnhealthyReason is LinkTimeout or MissedHeartbeats.
	UnhealthyReason string `json:"unhealthyReason,omitempty"`
}

// GameServerState is every link-back route's answer to a game server
// (docs/openapi.yaml, GameServerState): its instance's state and
// lifecycle, and how often to heartbeat.
type GameServerState struct {
	GameInstanceID string `json:"gameInstanceId"`
	State          State  `json:"state"`
	// HeartbeatIntervalSeconds is how often the deployment wants
	// heartbeats, in whole seconds (at least 1).
	HeartbeatIntervalSeconds int `json:"heartbeatIntervalSeconds"`
	Lifecycle
	// Sessions answers a heartbeat with allSessions: the other sessions
	// holding a room on this game server, as the call left them (Linked:
	// renewed; Ended, Unhealthy: over, close that session's game). nil
	// (absent) when not asked; empty ([]) when there are none.
	Sessions []Session `json:"sessions,omitzero"`
}

// Session is another session on the same game server.
type Session struct {
	GameInstanceID string `json:"gameInstanceId"`
	State          State  `json:"state"`
}

// Server is where the backend sends its players.
type Server struct {
	// Address is as GameFabric gave it, normally ip:port.
	Address string `json:"address"`
	// IP is taken from Address when GameFabric gave none; empty when
	// Address is not host:port.
	IP    string         `json:"ip"`
	Ports map[string]int `json:"ports"`
}

// Public is s as answers and events show it: a server without ports
// (GameFabric or a recovering link reported none) has "ports": {}, so that
// clients in any language always find an object there, never null. s is
// not changed.
func (s *Server) Public() *Server {
	if s == nil || s.Ports != nil {
		return s
	}
	c := *s
	c.Ports = map[string]int{}
	return &c
}

// LinkInfo is what a game server reported about itself when it linked.
type LinkInfo struct {
	Address    string         `json:"address,omitempty"`
	Ports      map[string]int `json:"ports,omitempty"`
	ServerName string         `json:"serverName,omitempty"`
}

// Attempt is one region of the plan: an upstream call (a session callback
// or an Allocator call; Status is its HTTP answer, 0 when none arrived) or
// a skipped region (Error says why). An Allocation's attempts never carry
// Body; a failed allocation's error answer does (docs/openapi.yaml,
// FailedAttempt).
type Attempt struct {
	Region string `json:"region"`
	// Reason is why the region is in the plan, or why it was skipped.
	Reason string `json:"reason,omitempty"`
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	// Body is up to 512 bytes of GameFabric's answer, credentials
	// redacted; only error answers carry it.
	Body       string `json:"body,omitempty"`
	DurationMs int64  `json:"durationMs"`
	// SuspectedOrphan: the attempt got no usable answer that proves nothing
	// was allocated (a timeout, the gateway's 504, a 2xx that broke off or
	// was unusable), so GameFabric may hold a server for it that nobody
	// uses. With a minted token that server cannot link.
	SuspectedOrphan bool `json:"suspectedOrphan,omitempty"`
	// RateLimited: the region's Allocator answered 429 (its rate limit,
	// not a lack of servers), or the region was skipped because its
	// Allocator had already done so in this allocation.
	RateLimited bool `json:"rateLimited,omitempty"`
	// AllocatorRegion is the region string sent to the Allocator, when it
	// is not the region's own name (GAMEFABRIC_ALLOCATORS).
	AllocatorRegion string `json:"allocatorRegion,omitempty"`
	// AllocatorKind is the kind of the region's Allocator ("gamefabric" or
	// "agones"), on every attempt but a room's session callback.
	AllocatorKind AllocatorKind `json:"allocatorKind,omitempty"`
	// GameServerName and NodeName are the Agones GameServer an Agones
	// allocator allocated, and its node.
	GameServerName string `json:"gameServerName,omitempty"`
	NodeName       string `json:"nodeName,omitempty"`
	// Placement is "room" for a session callback to a game server with a
	// free room (Server is that server's address); empty for the
	// Allocator's attempts.
	Placement Placement `json:"placement,omitempty"`
	Server    string    `json:"server,omitempty"`
	// MaxPlayerLatencyMs is the latency cap in force when the attempt was
	// made (latencyPolicies, maxPlayerLatencyMs); 0 = no cap.
	MaxPlayerLatencyMs float64 `json:"maxPlayerLatencyMs,omitempty"`
}

// Failure is why a Failed allocation failed.
type Failure struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// ErrorResponse is every error answer of the service's own (API Gateway's
// answers are {"message": ...} instead).
type ErrorResponse struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error answer's "error".
type ErrorDetail struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// State is the game instance's state, where it is why the call was
	// refused (INVALID_STATE, ALLOCATION_IN_PROGRESS).
	State State `json:"state,omitempty"`
	// Attempts is what each region answered, for a failed allocation
	// (with Body).
	Attempts []Attempt `json:"attempts,omitempty"`
}

// Regions is the answer of GET /v1/regions.
type Regions struct {
	Regions []Region `json:"regions"`
}

// Region is one region a game may be allocated in, with the targets its
// players ping to measure their latency.
type Region struct {
	Region      string       `json:"region"`
	Zone        string       `json:"zone"`
	PingTargets []PingTarget `json:"pingTargets"`
	RefreshedAt time.Time    `json:"refreshedAt"`
	// Health is Initialized, Deployed or Unhealthy; empty when the
	// deployment does not track region health.
	Health      string    `json:"health,omitempty"`
	HealthSince time.Time `json:"healthSince,omitzero"`
}

// PingTarget is one address a game client pings.
type PingTarget struct {
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}
