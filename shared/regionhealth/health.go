// Package regionhealth tracks the health of each GameFabric region the way
// PlayFab reports build region states (Initialized, Deployed, Unhealthy),
// but derived from what this service observes: allocation outcomes and ping
// refreshes. An Unhealthy region sits behind a circuit breaker so requests
// stop paying a slow failure on it, and one half-open probe at a time finds
// out when it has recovered.
package regionhealth

import "time"

// RegionState is a region's health state.
type RegionState string

const (
	// RegionInitialized: configured, nothing observed yet. An absent item
	// means this too, so a new region is tried rather than skipped.
	RegionInitialized RegionState = "Initialized"
	// RegionDeployed: a recent successful allocation, or live ping targets.
	RegionDeployed RegionState = "Deployed"
	// RegionUnhealthy: consecutive failures reached the threshold, or no ping
	// targets for too long. The breaker decides when to try it again.
	RegionUnhealthy RegionState = "Unhealthy"
)

// Why a region became Unhealthy.
const (
	BecauseAllocationFailures = "AllocationFailures"
	BecauseLinkTimeouts       = "LinkTimeouts"
	BecauseNoPingTargets      = "NoPingTargets"
)

// Health is what is known about one region.
type Health struct {
	Region string
	State  RegionState
	// Since is when State last changed (zero for a region never stored).
	Since               time.Time
	ConsecutiveFailures int
	// OpenUntil: the breaker skips the region until then. Set when it
	// becomes Unhealthy and again after a failed probe.
	OpenUntil time.Time
	// ProbeUntil: a half-open probe holds the region until then.
	ProbeUntil time.Time
	// LastPingTargetsAt is the last ping refresh that saw targets for it.
	LastPingTargetsAt time.Time
	// LastSuccessAt is the last successful allocation in the region: a
	// recent one keeps it Deployed even while ping discovery lists nothing.
	LastSuccessAt time.Time
	// FirstSeenAt is the first write about the region; for a region never
	// seen with ping targets it starts the NoPingUnhealthyAfter clock.
	FirstSeenAt time.Time
	// Reason says why it is Unhealthy (one of the Because constants).
	Reason string
}

// EffectiveState treats the zero value as Initialized, as an absent item is.
func (h Health) EffectiveState() RegionState {
	if h.State == "" {
		return RegionInitialized
	}
	return h.State
}
