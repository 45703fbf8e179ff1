package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestTransitions(t *testing.T) {
	p := DefaultPolicy
	now := t0.Add(time.Minute)
	calls := map[string]func(gameinstance.Record) (gameinstance.Record, bool, error){
		"link":      func(r gameinstance.Record) (gameinstance.Record, bool, error) { return p.Link(r, now, nil) },
		"heartbeat": func(r gameinstance.Record) (gameinstance.Record, bool, error) { return p.Heartbeat(r, now) },
		"end":       func(r gameinstance.Record) (gameinstance.Record, bool, error) { return p.End(r, now, "done") },
	}
	type want struct {
		state   gameinstance.State
		changed bool
		err     bool
	}
	tests := []struct {
		from gameinstance.State
		want map[string]want
	}{
		{gameinstance.StateAllocating, map[string]want{"link": {gameinstance.StateAllocating, false, true}, "heartbeat": {gameinstance.StateAllocating, false, true}, "end": {gameinstance.StateAllocating, false, true}}},
		{gameinstance.StateQueued, map[string]want{"link": {gameinstance.StateQueued, false, true}, "heartbeat": {gameinstance.StateQueued, false, true}, "end": {gameinstance.StateQueued, false, true}}},
		{gameinstance.StateFailed, map[string]want{"link": {gameinstance.StateFailed, false, true}, "heartbeat": {gameinstance.StateFailed, false, true}, "end": {gameinstance.StateFailed, false, true}}},
		{gameinstance.StateAllocated, map[string]want{"link": {gameinstance.StateLinked, true, false}, "heartbeat": {gameinstance.StateAllocated, false, true}, "end": {gameinstance.StateEnded, true, false}}},
		{gameinstance.StateLinked, map[string]want{"link": {gameinstance.StateLinked, false, false}, "heartbeat": {gameinstance.StateLinked, true, false}, "end": {gameinstance.StateEnded, true, false}}},
		{gameinstance.StateUnhealthy, map[string]want{"link": {gameinstance.StateUnhealthy, false, true}, "heartbeat": {gameinstance.StateUnhealthy, false, false}, "end": {gameinstance.StateEnded, true, false}}},
		{gameinstance.StateEnded, map[string]want{"link": {gameinstance.StateEnded, false, true}, "heartbeat": {gameinstance.StateEnded, false, false}, "end": {gameinstance.StateEnded, false, false}}},
	}
	for _, tc := range tests {
		for call, w := range tc.want {
			// A live lease: the allocate call is still recording its outcome.
			rec := gameinstance.Record{GameInstanceID: "gi", State: tc.from, LinkedAt: t0, UpdatedAt: t0, LeaseExpiresAt: now.Add(time.Second)}
			got, changed, err := calls[call](rec)
			if got.State != w.state || changed != w.changed || (err != nil) != w.err {
				t.Errorf("%s on %s = %s changed=%v err=%v; want %s changed=%v err=%v", call, tc.from, got.State, changed, err, w.state, w.changed, w.err)
			}
			if err != nil {
				// Allocating is transient (the outcome is being recorded): retry.
				wantCode := gameinstance.CodeInvalidState
				if tc.from == gameinstance.StateAllocating {
					wantCode = gameinstance.CodeAllocationInProgress
				}
				if e, ok := err.(*gameinstance.Error); !ok || e.Code != wantCode || e.State != tc.from {
					t.Errorf("%s on %s: err = %#v, want %s naming %s", call, tc.from, err, wantCode, tc.from)
				}
			}
			watched := got.State == gameinstance.StateLinked || got.State == gameinstance.StateAllocated
			if changed && watched == got.HealthDeadline.IsZero() {
				t.Errorf("%s on %s: health deadline %v for state %s", call, tc.from, got.HealthDeadline, got.State)
			}
			if changed && got.State == gameinstance.StateEnded && (!got.ExpiresAt.Equal(now.Add(p.Retention)) || got.EndReason != "done") {
				t.Errorf("%s on %s: ended record expires %v reason %q", call, tc.from, got.ExpiresAt, got.EndReason)
			}
		}
	}
}

func TestHealthDeadlines(t *testing.T) {
	p := Policy{defaults.Health{LinkTimeout: 2 * time.Minute, Period: 30 * time.Second, FailureThreshold: 3, InitialDelay: 30 * time.Second, Retention: time.Hour}}
	allocated := gameinstance.Record{GameInstanceID: "gi", State: gameinstance.StateAllocated, UpdatedAt: t0}
	linked, _, _ := p.Link(allocated, t0, nil)
	if want := t0.Add(30*time.Second + 90*time.Second); !linked.HealthDeadline.Equal(want) {
		t.Fatalf("deadline after link = %v, want link + initial delay + 3 periods = %v", linked.HealthDeadline, want)
	}
	early, _, _ := p.Heartbeat(linked, t0.Add(10*time.Second)) // inside the initial delay
	late, _, _ := p.Heartbeat(linked, t0.Add(5*time.Minute))
	if !early.HealthDeadline.Equal(linked.HealthDeadline) || !late.HealthDeadline.Equal(linked.HealthDeadline) {
		t.Fatalf("heartbeats moved the index key: %v / %v, want it kept at %v", early.HealthDeadline, late.HealthDeadline, linked.HealthDeadline)
	}
	if d := p.heartbeatDeadline(late); !d.Equal(t0.Add(5*time.Minute + 90*time.Second)) {
		t.Fatalf("deadline after a heartbeat = %v", d)
	}
	// The link keeps a claim's key that is no later than the first
	// heartbeat deadline (no index write), and moves a later one to it.
	for _, tc := range []struct{ key, want time.Time }{
		{t0.Add(-5 * time.Second).Add(2 * time.Minute), t0.Add(-5 * time.Second).Add(2 * time.Minute)},
		{t0.Add(time.Hour), t0.Add(2 * time.Minute)},
	} {
		claimed := allocated
		claimed.HealthDeadline = tc.key
		if got, _, _ := p.Link(claimed, t0, nil); !got.HealthDeadline.Equal(tc.want) {
			t.Errorf("link with key %v: key %v, want %v", tc.key, got.HealthDeadline, tc.want)
		}
	}

	type want struct {
		state    gameinstance.State
		reason   string
		deadline time.Time // the moved index entry, for unchanged states
	}
	indexed := allocated
	indexed.HealthDeadline = t0.Add(2 * time.Minute)
	claim := gameinstance.Record{GameInstanceID: "gi", State: gameinstance.StateAllocating, UpdatedAt: t0, LeaseExpiresAt: t0.Add(time.Minute)}
	tests := []struct {
		name string
		rec  gameinstance.Record
		at   time.Time
		want want // zero: nothing to write
	}{
		{"allocated before link timeout: entry moved", allocated, t0.Add(119 * time.Second), want{gameinstance.StateAllocated, "", t0.Add(2 * time.Minute)}},
		{"allocated before link timeout, entry right", indexed, t0.Add(119 * time.Second), want{}},
		{"allocated at link timeout", allocated, t0.Add(2 * time.Minute), want{gameinstance.StateUnhealthy, gameinstance.ReasonLinkTimeout, time.Time{}}},
		{"linked inside initial delay and threshold", linked, t0.Add(119 * time.Second), want{}},
		{"linked, never heartbeated", linked, t0.Add(2 * time.Minute), want{gameinstance.StateUnhealthy, gameinstance.ReasonMissedHeartbeats, time.Time{}}},
		{"heartbeat keeps it healthy", late, t0.Add(6 * time.Minute), want{}},
		{"heartbeats stopped", late, t0.Add(5*time.Minute + 90*time.Second), want{gameinstance.StateUnhealthy, gameinstance.ReasonMissedHeartbeats, time.Time{}}},
		{"claim in flight: entry moved past lease + link timeout", claim, t0.Add(30 * time.Second), want{gameinstance.StateAllocating, "", t0.Add(3 * time.Minute)}},
		{"claim in doubt: its server may still link", claim, t0.Add(2 * time.Minute), want{gameinstance.StateAllocating, "", t0.Add(3 * time.Minute)}},
		{"claim in doubt past link timeout: failed", claim, t0.Add(3 * time.Minute), want{gameinstance.StateFailed, "", time.Time{}}},
		{"ended is never marked", gameinstance.Record{State: gameinstance.StateEnded, UpdatedAt: t0}, t0.Add(time.Hour), want{}},
		{"unhealthy is not marked again", gameinstance.Record{State: gameinstance.StateUnhealthy, UpdatedAt: t0}, t0.Add(time.Hour), want{}},
	}
	for _, tc := range tests {
		got, changed := p.Review(tc.rec, tc.at)
		if changed != (tc.want != want{}) {
			t.Errorf("%s: changed=%v, want %v (%+v)", tc.name, changed, !changed, got)
			continue
		}
		if !changed {
			continue
		}
		if got.State != tc.want.state || got.UnhealthyReason != tc.want.reason || !got.HealthDeadline.Equal(tc.want.deadline) {
			t.Errorf("%s: got %s %q deadline %v, want %+v", tc.name, got.State, got.UnhealthyReason, got.HealthDeadline, tc.want)
		}
		final := got.State == gameinstance.StateUnhealthy || got.State == gameinstance.StateFailed
		if final != got.ExpiresAt.Equal(tc.at.Add(time.Hour)) {
			t.Errorf("%s: %s record expires %v", tc.name, got.State, got.ExpiresAt)
		}
		if got.State == gameinstance.StateFailed && (got.Failure == nil || got.Failure.Code != gameinstance.CodeAllocationFailed) {
			t.Errorf("%s: failure %+v", tc.name, got.Failure)
		}
	}
	// A heartbeat after being marked does not revive (Agones semantics).
	marked, _ := p.Review(linked, t0.Add(time.Hour))
	if again, changed, err := p.Heartbeat(marked, t0.Add(time.Hour+time.Second)); changed || err != nil || again.State != gameinstance.StateUnhealthy {
		t.Fatalf("heartbeat on Unhealthy = %s changed=%v err=%v", again.State, changed, err)
	}
}

// A claim whose outcome was never recorded is adopted by its server's link.
func TestLinkRecoversAnInDoubtClaim(t *testing.T) {
	p := DefaultPolicy
	claim := gameinstance.Record{GameInstanceID: "gi", State: gameinstance.StateAllocating, UpdatedAt: t0,
		LeaseExpiresAt: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour), HealthDeadline: t0.Add(3 * time.Minute),
		CandidateTokenHashes: []string{"minted-1", "minted-2"}}
	info := &gameinstance.LinkInfo{Address: "10.1.2.3:7777", Ports: map[string]int{"game": 7777}}

	if _, _, err := p.Link(claim, t0.Add(59*time.Second), info); gameinstance.CodeOf(err) != gameinstance.CodeAllocationInProgress {
		t.Fatalf("link inside the lease: err = %v, want ALLOCATION_IN_PROGRESS", err)
	}
	got, changed, err := p.Link(claim, t0.Add(time.Minute), info)
	if err != nil || !changed || got.State != gameinstance.StateLinked || !got.RecoveredByLink || !got.ExpiresAt.IsZero() {
		t.Fatalf("recovering link = %+v changed=%v err=%v", got, changed, err)
	}
	if got.Server == nil || got.Server.Address != "10.1.2.3:7777" || got.Server.IP != "10.1.2.3" || got.Server.Ports["game"] != 7777 {
		t.Fatalf("server = %+v, want what the server reported", got.Server)
	}
	if want := t0.Add(time.Minute + p.InitialDelay + p.Period*time.Duration(p.FailureThreshold)); !got.HealthDeadline.Equal(want) {
		t.Fatalf("deadline = %v, want %v", got.HealthDeadline, want)
	}
	if got, _, _ := p.Link(claim, t0.Add(time.Minute), nil); got.Server != nil || got.State != gameinstance.StateLinked {
		t.Fatalf("link without an address = %+v, want Linked without a server", got)
	}

	// With the backend's own token (no minted candidates) the link proves
	// nothing: the claim waits for the sweep.
	claim.CandidateTokenHashes = nil
	_, changed, err = p.Link(claim, t0.Add(time.Minute), info)
	var e *gameinstance.Error
	if changed || !errors.As(err, &e) || e.Code != gameinstance.CodeAllocationInProgress || e.RetryAfter != p.LinkTimeout {
		t.Fatalf("link with a caller's token: changed=%v err=%v, want ALLOCATION_IN_PROGRESS until the sweep resolves it", changed, err)
	}
}

func TestQueuedPlacementsEndCancelledOrTimedOut(t *testing.T) {
	p := DefaultPolicy
	until := t0.Add(time.Minute)
	queued := gameinstance.Record{GameInstanceID: "gi", State: gameinstance.StateQueued, HealthDeadline: until,
		Queue: &gameinstance.Queue{StartedAt: t0, Until: until, Ticket: "t"}}
	for _, tc := range []struct {
		name     string
		apply    func(gameinstance.Record) (gameinstance.Record, bool)
		state    gameinstance.State
		code     gameinstance.Code
		deadline time.Time
	}{
		{"cancelled", func(r gameinstance.Record) (gameinstance.Record, bool) {
			got, changed, _ := p.Cancel(r, t0.Add(time.Second))
			return got, changed
		}, gameinstance.StateFailed, gameinstance.CodePlacementCancelled, time.Time{}},
		{"reviewed before its deadline", func(r gameinstance.Record) (gameinstance.Record, bool) {
			r.HealthDeadline = t0 // an early index entry moves to the deadline
			return p.Review(r, t0.Add(time.Second))
		}, gameinstance.StateQueued, "", until},
		{"reviewed at its deadline", func(r gameinstance.Record) (gameinstance.Record, bool) { return p.Review(r, until) },
			gameinstance.StateFailed, gameinstance.CodePlacementTimedOut, time.Time{}},
	} {
		got, changed := tc.apply(queued)
		code := gameinstance.Code("")
		if got.Failure != nil {
			code = got.Failure.Code
		}
		if !changed || got.State != tc.state || code != tc.code || !got.HealthDeadline.Equal(tc.deadline) || (tc.state == gameinstance.StateFailed) == got.ExpiresAt.IsZero() {
			t.Errorf("%s: %s %s, deadline %v, expires %v, changed %v", tc.name, got.State, code, got.HealthDeadline, got.ExpiresAt, changed)
		}
	}
}

func TestHeartbeatWritesAtMostOncePerPeriod(t *testing.T) {
	p := DefaultPolicy // Period 30 s, threshold 3, initial delay 30 s
	linked := gameinstance.Record{State: gameinstance.StateLinked, LinkedAt: t0}
	beaten := linked
	beaten.LastHeartbeatAt = t0.Add(time.Minute)
	tests := []struct {
		name string
		rec  gameinstance.Record
		at   time.Duration // after t0
		due  bool
	}{
		{"within the initial delay nothing moves", linked, 10 * time.Second, false},
		{"the delay's end plus less than a period", linked, 59 * time.Second, false},
		{"the delay's end plus a period", linked, time.Minute, true},
		{"less than a period after the last recorded beat", beaten, time.Minute + 29*time.Second, false},
		{"a period after it", beaten, time.Minute + 30*time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.WriteDue(tc.rec, t0.Add(tc.at)); got != tc.due {
				t.Fatalf("WriteDue = %v, want %v", got, tc.due)
			}
			_, changed, err := p.Heartbeat(tc.rec, t0.Add(tc.at))
			if err != nil || changed != tc.due {
				t.Fatalf("Heartbeat changed = %v (%v), want %v", changed, err, tc.due)
			}
		})
	}

	// Beats every 10 s, jittered, for 20 minutes: at most one write per
	// period, and the recorded deadline is never more than one period
	// before the last beat's own (last beat + Period × threshold).
	for _, every := range []time.Duration{10 * time.Second, 29 * time.Second, 30 * time.Second, 31 * time.Second} {
		rec, writes, lastWrite := linked, 0, time.Time{}
		for at := p.InitialDelay; at < 20*time.Minute; at += every {
			now := t0.Add(at + time.Duration(at.Seconds())%7*time.Millisecond)
			next, changed, _ := p.Heartbeat(rec, now)
			if changed {
				if !lastWrite.IsZero() && now.Sub(lastWrite) < p.Period {
					t.Fatalf("every %v: writes %v apart", every, now.Sub(lastWrite))
				}
				writes, lastWrite, rec = writes+1, now, next
			}
			own := now.Add(p.Period * time.Duration(p.FailureThreshold))
			if early := own.Sub(p.heartbeatDeadline(rec)); early > p.Period {
				t.Fatalf("every %v at %v: the recorded deadline is %v early", every, at, early)
			}
		}
		if max := int((20*time.Minute - p.InitialDelay) / p.Period); writes > max+1 {
			t.Fatalf("every %v: %d writes in 20 min, want at most %d", every, writes, max+1)
		}
	}
}
