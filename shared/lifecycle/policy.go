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

// watchFrom is the health index key a Linked instance keeps while it
// heartbeats: the key it has when that is no later than its first
// heartbeat deadline (link + initial delay + Period × FailureThreshold),
// that deadline otherwise. From the key on, the sweep lists the instance
// every run and reads lastHeartbeatAt itself, so no heartbeat moves the
// key. With the defaults the claim's key (claim + LinkTimeout) is kept,
// and the link writes no index change either.
func (p Policy) watchFrom(rec gameinstance.Record) time.Time {
	first := p.heartbeatDeadline(rec)
	if rec.HealthDeadline.IsZero() || rec.HealthDeadline.After(first) {
		return first
	}
	return rec.HealthDeadline
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
	rec.HealthDeadline = p.watchFrom(rec)
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
// The health index key stays where it is (one a record written before
// there was an index lacks is set), so a heartbeat writes the record alone.
func (p Policy) Heartbeat(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, error) {
	switch rec.State {
	case gameinstance.StateLinked:
		if !p.WriteDue(rec, now) {
			return rec, false, nil
		}
		rec.LastHeartbeatAt, rec.UpdatedAt = now, now
		rec.HealthDeadline = p.watchFrom(rec)
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

// Review is the health sweep's look at an instance its index lists.
// Deadlines are recomputed from the record, so a stale index entry never
// marks a healthy instance.
//   - Linked past its heartbeat deadline → Unhealthy; before it, nothing:
//     its entry stays where it is and the sweep looks again.
//   - Allocated past its link deadline → Unhealthy; an entry that is early
//     is moved to the deadline.
//   - Queued past its deadline → Failed (PLACEMENT_TIMED_OUT): no queue
//     message did it, so none will.
//   - Allocating whose lease ran out LinkTimeout ago → Failed: its outcome
//     was never recorded and no server linked back in time, so no server
//     holds the instance and a retry may allocate afresh.
func (p Policy) Review(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool) {
	switch rec.State {
	case gameinstance.StateAllocated:
		if deadline := rec.UpdatedAt.Add(p.LinkTimeout); now.Before(deadline) {
			return move(rec, deadline)
		}
		return p.markUnhealthy(rec, now, gameinstance.ReasonLinkTimeout), true
	case gameinstance.StateLinked:
		if _, overdue := p.Watch(rec, now); overdue {
			return p.markUnhealthy(rec, now, gameinstance.ReasonMissedHeartbeats), true
		}
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

// Watch is what the sweep learns from a Linked instance's record: whether
// it is overdue at now, and if not, until when it cannot be (its heartbeat
// deadline, which only a later heartbeat moves). Zero and false for every
// other state, which Review decides alone.
func (p Policy) Watch(rec gameinstance.Record, now time.Time) (until time.Time, overdue bool) {
	if rec.State != gameinstance.StateLinked {
		return time.Time{}, false
	}
	deadline := p.heartbeatDeadline(rec)
	if now.Before(deadline) {
		return deadline, false
	}
	return time.Time{}, true
}

func (p Policy) markUnhealthy(rec gameinstance.Record, now time.Time, reason string) gameinstance.Record {
	rec.State, rec.UnhealthyAt, rec.UnhealthyReason, rec.UpdatedAt = gameinstance.StateUnhealthy, now, reason, now
	rec.HealthDeadline, rec.ExpiresAt = time.Time{}, now.Add(p.Retention)
	return rec
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
