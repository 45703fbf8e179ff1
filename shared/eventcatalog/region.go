package eventcatalog

import (
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// RegionDetail is the detail of RegionHealthChanged.
type RegionDetail struct {
	// IdempotencyKey is "<region>:<state>:<since, epoch ms>".
	IdempotencyKey string                   `json:"idempotencyKey"`
	Region         string                   `json:"region"`
	State          regionhealth.RegionState `json:"state"`
	PreviousState  regionhealth.RegionState `json:"previousState"`
	// Reason says why the region is Unhealthy (AllocationFailures,
	// LinkTimeouts, NoPingTargets).
	Reason              string `json:"reason,omitempty"`
	Since               string `json:"since,omitempty"`
	ConsecutiveFailures int    `json:"consecutiveFailures"`
	// RetryAfter: while Unhealthy, when the breaker lets the next probe
	// allocation through.
	RetryAfter        string `json:"retryAfter,omitempty"`
	LastSuccessAt     string `json:"lastSuccessAt,omitempty"`
	LastPingTargetsAt string `json:"lastPingTargetsAt,omitempty"`
}

// FromRegion returns the event of one stored write to a region's health:
// old is the health before it (nil when the write created the item), cur
// after. Only a change of state is an event; a region first stored as
// Initialized has not changed (an absent region is Initialized).
func FromRegion(old *regionhealth.Health, cur regionhealth.Health) []Event {
	prev := regionhealth.RegionInitialized
	if old != nil {
		prev = old.EffectiveState()
	}
	state := cur.EffectiveState()
	if state == prev {
		return nil
	}
	d := RegionDetail{
		IdempotencyKey:      fmt.Sprintf("%s:%s:%d", cur.Region, state, cur.Since.UnixMilli()),
		Region:              cur.Region,
		State:               state,
		PreviousState:       prev,
		Since:               timestamp(cur.Since),
		ConsecutiveFailures: cur.ConsecutiveFailures,
		LastSuccessAt:       timestamp(cur.LastSuccessAt),
		LastPingTargetsAt:   timestamp(cur.LastPingTargetsAt),
	}
	if state == regionhealth.RegionUnhealthy {
		d.Reason, d.RetryAfter = cur.Reason, timestamp(cur.OpenUntil)
	}
	return []Event{{Type: RegionHealthChanged, Time: cur.Since, Region: &d}}
}
