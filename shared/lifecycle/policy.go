// Package lifecycle is what happens to a game instance after allocation: the
// game server links back, heartbeats and ends it; the health sweep marks
// instances that never link or stop heartbeating Unhealthy (Agones' health
// semantics). Transitions are pure functions of (record, call, time); the
// service applies them with optimistic, version-conditioned writes.
package lifecycle

import (
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
)

// Policy holds the health settings.
type Policy struct {
	// LinkTimeout: an Allocated instance that has not linked by then is
	// Unhealthy (LinkTimeout): the allocation silently failed.
	LinkTimeout time.Duration
	// Period, FailureThreshold, InitialDelay: a Linked instance whose last
	// heartbeat (or link, plus InitialDelay) is older than Period ×
	// FailureThreshold is Unhealthy (MissedHeartbeats).
	Period           time.Duration
	FailureThreshold int
	InitialDelay     time.Duration
	// Retention: Ended and Unhealthy records expire this long after.
	Retention time.Duration
}

// DefaultPolicy matches the documented defaults.
var DefaultPolicy = Policy{LinkTimeout: 2 * time.Minute, Period: 30 * time.Second, FailureThreshold: 3,
	InitialDelay: 30 * time.Second, Retention: 7 * 24 * time.Hour}

// heartbeatDeadline is when a Linked instance becomes due for the sweep.
func (p Policy) heartbeatDeadline(rec allocation.Record) time.Time {
	since := rec.LinkedAt.Add(p.InitialDelay)
	if rec.LastHeartbeatAt.After(since) {
		since = rec.LastHeartbeatAt
	}
	return since.Add(p.Period * time.Duration(p.FailureThreshold))
}

func wrongState(rec allocation.Record, action string) error {
	if rec.State == allocation.StateAllocating {
		// The game server hears of its allocation (the callback) before the
		// allocate call has recorded it: a moment later the call will work.
		return &allocation.Error{Code: allocation.CodeAllocationInProgress, State: rec.State, RetryAfter: time.Second,
			Message: fmt.Sprintf("cannot %s game instance %q yet: its allocation is still being recorded; retry", action, rec.GameInstanceID)}
	}
	return &allocation.Error{Code: allocation.CodeInvalidState, State: rec.State,
		Message: fmt.Sprintf("cannot %s game instance %q: it is %s", action, rec.GameInstanceID, rec.State)}
}

// Link: Allocated → Linked. Linking a Linked instance again changes nothing.
func (p Policy) Link(rec allocation.Record, now time.Time, info *allocation.LinkInfo) (allocation.Record, bool, error) {
	switch rec.State {
	case allocation.StateLinked:
		return rec, false, nil
	case allocation.StateAllocated:
		rec.State, rec.LinkedAt, rec.LinkInfo, rec.UpdatedAt = allocation.StateLinked, now, info, now
		rec.HealthDeadline = p.heartbeatDeadline(rec)
		return rec, true, nil
	}
	return rec, false, wrongState(rec, "link")
}

// Heartbeat records a Linked instance's heartbeat. On an Ended or Unhealthy
// instance it changes nothing (Unhealthy is not revived, as in Agones) and
// is not an error: the answer tells the server its state.
func (p Policy) Heartbeat(rec allocation.Record, now time.Time) (allocation.Record, bool, error) {
	switch rec.State {
	case allocation.StateLinked:
		rec.LastHeartbeatAt, rec.UpdatedAt = now, now
		rec.HealthDeadline = p.heartbeatDeadline(rec)
		return rec, true, nil
	case allocation.StateEnded, allocation.StateUnhealthy:
		return rec, false, nil
	}
	return rec, false, wrongState(rec, "heartbeat (link first)")
}

// End: Allocated, Linked or Unhealthy → Ended. Ending twice changes nothing.
func (p Policy) End(rec allocation.Record, now time.Time, reason string) (allocation.Record, bool, error) {
	switch rec.State {
	case allocation.StateEnded:
		return rec, false, nil
	case allocation.StateAllocated, allocation.StateLinked, allocation.StateUnhealthy:
		rec.State, rec.EndedAt, rec.EndReason, rec.UpdatedAt = allocation.StateEnded, now, reason, now
		rec.HealthDeadline, rec.ExpiresAt = time.Time{}, now.Add(p.Retention)
		return rec, true, nil
	}
	return rec, false, wrongState(rec, "end")
}

// MarkIfDue: Allocated or Linked past its deadline → Unhealthy. The deadline
// is recomputed from the record, so a stale index entry never marks a
// healthy instance.
func (p Policy) MarkIfDue(rec allocation.Record, now time.Time) (allocation.Record, bool) {
	var reason string
	switch {
	case rec.State == allocation.StateAllocated && !now.Before(rec.UpdatedAt.Add(p.LinkTimeout)):
		reason = allocation.ReasonLinkTimeout
	case rec.State == allocation.StateLinked && !now.Before(p.heartbeatDeadline(rec)):
		reason = allocation.ReasonMissedHeartbeats
	default:
		return rec, false
	}
	rec.State, rec.UnhealthyAt, rec.UnhealthyReason, rec.UpdatedAt = allocation.StateUnhealthy, now, reason, now
	rec.HealthDeadline, rec.ExpiresAt = time.Time{}, now.Add(p.Retention)
	return rec, true
}

// PolicyFrom builds the policy from the lifecycle configuration.
func PolicyFrom(c config.Lifecycle) Policy {
	return Policy{LinkTimeout: c.LinkTimeout, Period: c.HealthPeriod, FailureThreshold: c.HealthFailureThreshold,
		InitialDelay: c.HealthInitialDelay, Retention: c.RecordRetention}
}
