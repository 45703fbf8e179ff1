// Package lifecycle is what happens to a game instance after allocation: the
// game server links back, heartbeats and ends it; the health sweep marks
// instances that never link or stop heartbeating Unhealthy (Agones' health
// semantics). Transitions are pure functions of (record, call, time); the
// service applies them with optimistic, version-conditioned writes.
package lifecycle

import (
	"fmt"
	"net"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Policy is game-instance health's settings (config.Lifecycle reads them
// whole) and its transitions.
type Policy struct{ defaults.Health }

// DefaultPolicy matches the documented defaults.
var DefaultPolicy = Policy{defaults.HealthDefaults}

// heartbeatDeadline is when a Linked instance becomes due for the sweep.
func (p Policy) heartbeatDeadline(rec gameinstance.Record) time.Time {
	since := rec.LinkedAt.Add(p.InitialDelay)
	if rec.LastHeartbeatAt.After(since) {
		since = rec.LastHeartbeatAt
	}
	return since.Add(p.Period * time.Duration(p.FailureThreshold))
}

// HeartbeatIndexDeadline is where a heartbeat at now puts the instance's
// health index key: its deadline (now + Period × FailureThreshold) rounded
// down to a multiple of IndexStep. Heartbeats within one step give the
// same value, and DynamoDB writes the index only when the value changes,
// so the key moves at most once per step, however often servers
// heartbeat. Rounding down keeps the key at or before the real deadline,
// never after, and still more than one Period away: the sweep finds the
// instance on time and, as it re-derives the deadline from the record,
// moves a key that is early instead of marking it.
func (p Policy) HeartbeatIndexDeadline(now time.Time) time.Time {
	exact := now.Add(p.Period * time.Duration(p.FailureThreshold))
	if step := p.IndexStep(); step > 0 {
		return exact.Truncate(step)
	}
	return exact
}

// IndexStep is how often, at most, heartbeats move the index key:
// (FailureThreshold − 1) periods, at least one (a minute by default).
func (p Policy) IndexStep() time.Duration {
	return p.Period * time.Duration(max(1, p.FailureThreshold-1))
}

func wrongState(rec gameinstance.Record, action string) error {
	if rec.State == gameinstance.StateAllocating {
		// The game server hears of its allocation (the callback) before the
		// allocate call has recorded it: a moment later the call will work.
		return &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, State: rec.State, RetryAfter: time.Second,
			Message: fmt.Sprintf("cannot %s game instance %q yet: its allocation is still being recorded; retry", action, rec.GameInstanceID)}
	}
	return &gameinstance.Error{Code: gameinstance.CodeInvalidState, State: rec.State,
		Message: fmt.Sprintf("cannot %s game instance %q: it is %s", action, rec.GameInstanceID, rec.State)}
}

// Link: Allocated → Linked. Linking a Linked instance again changes nothing.
// An Allocating claim whose lease has run out is in doubt: its invocation
// could not record the outcome. A server holding one of its minted tokens
// can only be the server GameFabric allocated for it, so its link records
// the allocation. A caller's own token proves nothing of the kind (the
// caller may use it elsewhere), so such a claim waits for the sweep.
func (p Policy) Link(rec gameinstance.Record, now time.Time, info *gameinstance.LinkInfo) (gameinstance.Record, bool, error) {
	switch {
	case rec.State == gameinstance.StateLinked:
		return rec, false, nil
	case rec.State == gameinstance.StateAllocated:
	case rec.State == gameinstance.StateAllocating && !now.Before(rec.LeaseExpiresAt) && len(rec.CandidateTokenHashes) > 0:
		rec.RecoveredByLink, rec.Server, rec.ExpiresAt = true, serverOf(info), time.Time{}
		rec.Placement = gameinstance.PlacementAllocator
		if rec.RoomServer != "" {
			// The claim took a room before its outcome was lost: the
			// server is the room's, whose address GameFabric gave.
			rec.Placement = gameinstance.PlacementRoom
			at := gameinstance.LinkInfo{Address: rec.RoomServer}
			if info != nil {
				at.Ports = info.Ports
			}
			rec.Server = serverOf(&at)
		}
	case rec.State == gameinstance.StateAllocating && !now.Before(rec.LeaseExpiresAt):
		resolved := rec.LeaseExpiresAt.Add(p.LinkTimeout)
		return rec, false, &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, State: rec.State,
			RetryAfter: gameinstance.SecondsUntil(resolved, now),
			Message: fmt.Sprintf("cannot link game instance %q: its allocation's outcome was never recorded, and a partnerGameToken "+
				"the backend chose cannot prove which server holds it; the health sweep fails the allocation by %s",
				rec.GameInstanceID, resolved.UTC().Format(time.RFC3339))}
	default:
		return rec, false, wrongState(rec, "link")
	}
	rec.State, rec.LinkedAt, rec.LinkInfo, rec.UpdatedAt = gameinstance.StateLinked, now, info, now
	rec.HealthDeadline = p.heartbeatDeadline(rec)
	return rec, true, nil
}

// serverOf is what a recovering link says about the server; nil when the
// server did not report its address.
func serverOf(info *gameinstance.LinkInfo) *gameinstance.Server {
	if info == nil || info.Address == "" {
		return nil
	}
	ip := info.Address
	if host, _, err := net.SplitHostPort(info.Address); err == nil {
		ip = host
	}
	return &gameinstance.Server{Address: info.Address, IP: ip, Ports: info.Ports}
}

// Heartbeat records a Linked instance's heartbeat. On an Ended or Unhealthy
// instance it changes nothing (Unhealthy is not revived, as in Agones) and
// is not an error: the answer tells the server its state.
//
// A heartbeat that would move the instance's deadline by less than one
// Period is not written (WriteDue): the sweep then marks the instance at
// most one Period earlier than the last heartbeat's own deadline, and an
// instance is written at most once per Period however often it beats.
func (p Policy) Heartbeat(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, error) {
	switch rec.State {
	case gameinstance.StateLinked:
		if !p.WriteDue(rec, now) {
			return rec, false, nil
		}
		rec.LastHeartbeatAt, rec.UpdatedAt = now, now
		rec.HealthDeadline = p.heartbeatDeadline(rec)
		return rec, true, nil
	case gameinstance.StateEnded, gameinstance.StateUnhealthy:
		return rec, false, nil
	}
	return rec, false, wrongState(rec, "heartbeat (link first)")
}

// WriteDue: a heartbeat at now would move a Linked instance's deadline
// by at least one Period, so it is worth a write. Within the initial
// delay no heartbeat moves it at all.
func (p Policy) WriteDue(rec gameinstance.Record, now time.Time) bool {
	beat := rec
	beat.LastHeartbeatAt = now
	return !p.heartbeatDeadline(beat).Before(p.heartbeatDeadline(rec).Add(p.Period))
}

// End: Allocated, Linked or Unhealthy → Ended. Ending twice changes nothing.
func (p Policy) End(rec gameinstance.Record, now time.Time, reason string) (gameinstance.Record, bool, error) {
	switch rec.State {
	case gameinstance.StateEnded:
		return rec, false, nil
	case gameinstance.StateAllocated, gameinstance.StateLinked, gameinstance.StateUnhealthy:
		rec.State, rec.EndedAt, rec.EndReason, rec.UpdatedAt = gameinstance.StateEnded, now, reason, now
		rec.HealthDeadline, rec.ExpiresAt = time.Time{}, now.Add(p.Retention)
		return rec, true, nil
	}
	return rec, false, wrongState(rec, "end")
}

// Cancel: Queued → Failed (PLACEMENT_CANCELLED). The write is conditioned
// on the version read, and the queue worker claims the record from Queued
// before it asks anyone: whichever comes first wins, so no attempt starts
// after a cancellation is answered.
func (p Policy) Cancel(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, error) {
	return p.failQueued(rec, now, gameinstance.CodePlacementCancelled, "the queued placement was cancelled before a game server was found"), true, nil
}

func (p Policy) failQueued(rec gameinstance.Record, now time.Time, code gameinstance.Code, msg string) gameinstance.Record {
	rec.State, rec.UpdatedAt, rec.Failure = gameinstance.StateFailed, now, &gameinstance.Failure{Code: code, Message: msg}
	rec.HealthDeadline, rec.ExpiresAt = time.Time{}, now.Add(p.Retention)
	return rec
}

// TimedOutMessage is the failure of a queued placement the sweep found
// past its deadline (its queue message lost, or the queue down).
const TimedOutMessage = "no game server was found before the placement's queueTimeoutSeconds ran out"

// Review is the health sweep's look at a due instance. Deadlines are
// recomputed from the record, so a stale index entry never marks a healthy
// instance; an entry that is early is moved to the real deadline.
//   - Allocated or Linked past its deadline → Unhealthy.
//   - Queued past its deadline → Failed (PLACEMENT_TIMED_OUT): no queue
//     message did it, so none will.
//   - Allocating whose lease ran out LinkTimeout ago → Failed: its outcome
//     was never recorded and no server linked back in time, so no server
//     holds the instance and a retry may allocate afresh.
func (p Policy) Review(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool) {
	switch rec.State {
	case gameinstance.StateAllocated:
		return p.markOrMove(rec, now, rec.UpdatedAt.Add(p.LinkTimeout), gameinstance.ReasonLinkTimeout)
	case gameinstance.StateLinked:
		return p.markOrMove(rec, now, p.heartbeatDeadline(rec), gameinstance.ReasonMissedHeartbeats)
	case gameinstance.StateQueued:
		if rec.Queue == nil || !now.Before(rec.Queue.Until) {
			return p.failQueued(rec, now, gameinstance.CodePlacementTimedOut, TimedOutMessage), true
		}
		return move(rec, rec.Queue.Until)
	case gameinstance.StateAllocating:
		if deadline := rec.LeaseExpiresAt.Add(p.LinkTimeout); now.Before(deadline) {
			return move(rec, deadline)
		}
		return p.outcomeLost(rec, now), true
	}
	return rec, false
}

// markOrMove marks rec Unhealthy at its deadline, or moves an early index
// entry to it.
func (p Policy) markOrMove(rec gameinstance.Record, now, deadline time.Time, reason string) (gameinstance.Record, bool) {
	if now.Before(deadline) {
		return move(rec, deadline)
	}
	rec.State, rec.UnhealthyAt, rec.UnhealthyReason, rec.UpdatedAt = gameinstance.StateUnhealthy, now, reason, now
	rec.HealthDeadline, rec.ExpiresAt = time.Time{}, now.Add(p.Retention)
	return rec, true
}

func move(rec gameinstance.Record, deadline time.Time) (gameinstance.Record, bool) {
	if rec.HealthDeadline.Equal(deadline) {
		return rec, false
	}
	rec.HealthDeadline = deadline
	return rec, true
}

func (p Policy) outcomeLost(rec gameinstance.Record, now time.Time) gameinstance.Record {
	rec.State, rec.UpdatedAt, rec.CandidateTokenHashes = gameinstance.StateFailed, now, nil
	rec.Failure = &gameinstance.Failure{Code: gameinstance.CodeAllocationFailed, Message: OutcomeLostMessage}
	rec.HealthDeadline, rec.ExpiresAt = time.Time{}, now.Add(p.Retention)
	return rec
}

// OutcomeLostMessage is the failure of an in-doubt claim the sweep ended.
const OutcomeLostMessage = "the allocation's outcome was never recorded and no game server linked back within LINK_TIMEOUT; retrying allocates afresh"
