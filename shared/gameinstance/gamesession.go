package gameinstance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"time"
)

// A GameLift game session placement (StartGameSessionPlacement, served by
// shared/gameliftapi) is a game instance whose id is the PlacementId. Its
// record keeps only a digest of what it was asked (Fingerprint.GameLift);
// the rest is kept beside it (GameSessionPlacement), so that the record a
// heartbeat rewrites stays small.

// GameProperty is one of a game session's key-value properties.
type GameProperty struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// PlayerSession is a player the placement asks a seat for (GameLift's
// DesiredPlayerSession), with the data handed to the game server.
type PlayerSession struct {
	PlayerID   string `json:"PlayerId"`
	PlayerData string `json:"PlayerData,omitempty"`
}

// GameSession is what a GameLift placement tells its game server beyond an
// allocation's payload: the game session's fields under GameLift's names,
// each a top-level field of the payload (allocation.Payload).
type GameSession struct {
	Name                      string          `json:"GameSessionName,omitempty"`
	Properties                []GameProperty  `json:"GameProperties,omitempty"`
	Data                      string          `json:"GameSessionData,omitempty"`
	MaximumPlayerSessionCount *int            `json:"MaximumPlayerSessionCount,omitempty"`
	DesiredPlayerSessions     []PlayerSession `json:"DesiredPlayerSessions,omitempty"`
}

// RegionLatency is one of a placement's PlayerLatencies as GameLift takes
// them: flat, one player and one region each.
type RegionLatency struct {
	PlayerID  string  `json:"PlayerId"`
	Region    string  `json:"RegionIdentifier"`
	LatencyMs float64 `json:"LatencyInMilliseconds"`
}

// GameSessionPlacement is what the service keeps of a GameLift placement
// beside its record (GameSessionPlacementsTable), for
// DescribeGameSessionPlacement and the placement's events.
type GameSessionPlacement struct {
	ID string `json:"placementId"`
	// Digest is the record's Fingerprint.GameLift: the same digest is the
	// same placement asked again.
	Digest         string          `json:"digest"`
	QueueName      string          `json:"queueName"`
	QueueArn       string          `json:"queueArn,omitempty"`
	GameSessionArn string          `json:"gameSessionArn"`
	Session        GameSession     `json:"session"`
	Latencies      []RegionLatency `json:"playerLatencies,omitempty"`
	// LocationOrder and FallbackStrategy are the request's
	// PriorityConfigurationOverride, echoed back.
	LocationOrder    []string `json:"locationOrder,omitempty"`
	FallbackStrategy string   `json:"fallbackStrategy,omitempty"`
}

// ErrOtherInputs: a placement with this id is kept with other inputs.
var ErrOtherInputs = errors.New("the placement id is kept with other inputs")

// IsGameLiftName reports whether s is 1-max letters, digits and -: the
// pattern [a-zA-Z0-9-]+ of a GameLift PlacementId (max 48) and queue name
// (max 128).
func IsGameLiftName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// GameLift's GameSessionPlacementState.
const (
	PlacementPending   = "PENDING"
	PlacementFulfilled = "FULFILLED"
	PlacementCancelled = "CANCELLED"
	PlacementTimedOut  = "TIMED_OUT"
	PlacementFailed    = "FAILED"
)

// PlacementStatus is a placement's state as GameLift names it: waiting
// (Queued, Allocating) is PENDING; a server (Allocated, Linked, and after
// its game Ended or Unhealthy) is FULFILLED; a failure by its code:
// cancelled is CANCELLED, no capacity found in the queue's time (its
// deadline passed, or too little of it was left to wait) is TIMED_OUT, as
// GameLift says of a placement whose queue found no room, anything else
// FAILED.
func PlacementStatus(r Record) string { return PlacementStatusOf(r.State, r.Failure) }

// PlacementStatusOf is PlacementStatus of a record in state with failure.
func PlacementStatusOf(state State, failure *Failure) string {
	switch state {
	case StateAllocated, StateLinked, StateEnded, StateUnhealthy:
		return PlacementFulfilled
	case StateFailed:
		if failure == nil {
			return PlacementFailed
		}
		switch failure.Code {
		case CodePlacementCancelled:
			return PlacementCancelled
		case CodePlacementTimedOut, CodeNoCapacity, CodeRateLimited:
			return PlacementTimedOut
		}
		return PlacementFailed
	}
	return PlacementPending
}

// PlacementEnded is when a placement stopped being PENDING (zero while it
// is): placed (allocatedAt; the link for one recovered by it) or failed.
func PlacementEnded(r Record) time.Time {
	switch PlacementStatus(r) {
	case PlacementPending:
		return time.Time{}
	case PlacementFulfilled:
		switch {
		case !r.AllocatedAt.IsZero():
			return r.AllocatedAt
		case !r.LinkedAt.IsZero():
			return r.LinkedAt
		}
	}
	return r.UpdatedAt
}

// PlayerSessionID is the psess- id of a player placed by a placement:
// the same on every answer and event.
func PlayerSessionID(placementID, playerID string) string {
	sum := sha256.Sum256([]byte(placementID + "\x00" + playerID))
	return "psess-" + hex.EncodeToString(sum[:16])
}

// Endpoint is where players connect to s: its IP (else its address's
// host), that host as a DNS name, and its "game" port (its only port when
// it names no "game"; 0 when it cannot say).
func Endpoint(s *Server) (ip, dnsName string, port int) {
	if s == nil {
		return "", "", 0
	}
	host := s.Address
	if h, _, err := net.SplitHostPort(s.Address); err == nil {
		host = h
	}
	ip = s.IP
	if ip == "" {
		ip = host
	}
	if p, ok := s.Ports["game"]; ok {
		port = p
	} else if len(s.Ports) == 1 {
		for _, p := range s.Ports {
			port = p
		}
	}
	return ip, host, port
}
