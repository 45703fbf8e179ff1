package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestHoldsToken(t *testing.T) {
	h := gameinstance.HashToken
	candidates := []string{h("step-1"), h("step-2")}
	tests := []struct {
		name  string
		rec   gameinstance.Record
		token string
		want  bool
	}{
		{"recorded server's token", gameinstance.Record{State: gameinstance.StateLinked, PartnerGameTokenHash: h("step-2")}, "step-2", true},
		{"wrong token", gameinstance.Record{State: gameinstance.StateLinked, PartnerGameTokenHash: h("step-2")}, "step-3", false},
		{"in doubt: any step's token", gameinstance.Record{State: gameinstance.StateAllocating, PartnerGameTokenHash: h("step-1"), CandidateTokenHashes: candidates}, "step-2", true},
		{"in doubt: not a step's token", gameinstance.Record{State: gameinstance.StateAllocating, PartnerGameTokenHash: h("step-1"), CandidateTokenHashes: candidates}, "other", false},
		// Once recorded, an orphan from a timed-out step is refused even if
		// candidates were somehow left behind.
		{"recorded: orphan's token", gameinstance.Record{State: gameinstance.StateAllocated, PartnerGameTokenHash: h("step-2"), CandidateTokenHashes: candidates}, "step-1", false},
		{"empty token", gameinstance.Record{State: gameinstance.StateAllocated, PartnerGameTokenHash: h("x")}, "", false},
	}
	for _, tc := range tests {
		if got := holdsToken(tc.rec, tc.token); got != tc.want {
			t.Errorf("%s: holdsToken = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHeartbeat(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	linkedAt := now.Add(-10 * time.Minute)
	rec := func(state gameinstance.State) gameinstance.Record {
		return gameinstance.Record{GameInstanceID: "gi", State: state, PartnerGameTokenHash: gameinstance.HashToken("tok"), Version: 3,
			LinkedAt: linkedAt, LastHeartbeatAt: linkedAt, HealthDeadline: linkedAt.Add(time.Minute)}
	}
	tests := []struct {
		name      string
		stored    *gameinstance.Record
		token     string
		wantCode  gameinstance.Code
		wantState gameinstance.State
		written   bool
	}{
		{"linked: one write", ptr(rec(gameinstance.StateLinked)), "tok", "", gameinstance.StateLinked, true},
		{"wrong token", ptr(rec(gameinstance.StateLinked)), "other", gameinstance.CodeUnauthorized, "", false},
		{"no such instance", nil, "tok", gameinstance.CodeUnauthorized, "", false},
		{"ended: told, not an error", ptr(rec(gameinstance.StateEnded)), "tok", "", gameinstance.StateEnded, false},
		{"unhealthy: not revived", ptr(rec(gameinstance.StateUnhealthy)), "tok", "", gameinstance.StateUnhealthy, false},
		{"allocated: link first", ptr(rec(gameinstance.StateAllocated)), "tok", gameinstance.CodeInvalidState, gameinstance.StateAllocated, false},
		{"ended, wrong token", ptr(rec(gameinstance.StateEnded)), "other", gameinstance.CodeUnauthorized, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeStore(1)
			if tt.stored != nil {
				f.recs["gi"] = *tt.stored
			}
			svc := &Service{Store: f, Policy: DefaultPolicy, Now: func() time.Time { return now }}
			got, err := svc.Heartbeat(context.Background(), "gi", tt.token)
			if gameinstance.CodeOf(err) != tt.wantCode && !(tt.wantCode == "" && err == nil) {
				t.Fatalf("err = %v, want code %q", err, tt.wantCode)
			}
			if got.State != tt.wantState {
				t.Errorf("state %q, want %q", got.State, tt.wantState)
			}
			after := f.recs["gi"]
			if wrote := after.Version != 3; tt.stored != nil && wrote != tt.written {
				t.Errorf("written %v, want %v", wrote, tt.written)
			}
			if tt.written && (!after.LastHeartbeatAt.Equal(now) || after.HealthDeadline.After(DefaultPolicy.heartbeatDeadline(after))) {
				t.Errorf("heartbeat at %v, index key %v after the deadline %v", after.LastHeartbeatAt, after.HealthDeadline, DefaultPolicy.heartbeatDeadline(after))
			}
		})
	}
}

// Heartbeats never move the index key; a record written before there was
// one is given one by the full path, once.
func TestHeartbeatsKeepTheIndexKey(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 7, 0, time.UTC)
	for _, key := range []time.Time{start.Add(2 * time.Minute), {}} {
		f := newFakeStore(1)
		f.recs["gi"] = gameinstance.Record{GameInstanceID: "gi", State: gameinstance.StateLinked, PartnerGameTokenHash: gameinstance.HashToken("tok"),
			Version: 1, LinkedAt: start, HealthDeadline: key}
		p := DefaultPolicy
		now := start.Add(2 * p.Period) // past the initial delay: every beat is written
		svc := &Service{Store: f, Policy: p, Now: func() time.Time { return now }}
		var keys []time.Time
		for ; now.Before(start.Add(10 * time.Minute)); now = now.Add(p.Period) {
			rec, err := svc.Heartbeat(context.Background(), "gi", "tok")
			if err != nil || !rec.LastHeartbeatAt.Equal(now) {
				t.Fatalf("heartbeat at %v: %v, %+v", now, err, rec)
			}
			if len(keys) == 0 || !rec.HealthDeadline.Equal(keys[len(keys)-1]) {
				keys = append(keys, rec.HealthDeadline)
			}
		}
		want := key
		if key.IsZero() {
			want = start.Add(2*p.Period + p.Period*time.Duration(p.FailureThreshold)) // its first beat's deadline
		}
		if len(keys) != 1 || !keys[0].Equal(want) {
			t.Errorf("key %v: index keys over 10 minutes of heartbeats = %v, want only %v", key, keys, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// CancelPlacement cancels only a queued placement: a placed instance is
// answered as it is and never ended, an attempt in flight is waited for.
func TestCancelPlacement(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cancelled := &gameinstance.Failure{Code: gameinstance.CodePlacementCancelled, Message: "cancelled"}
	tests := []struct {
		name      string
		stored    *gameinstance.Record
		wantCode  gameinstance.Code
		wantState gameinstance.State
		written   bool
	}{
		{"queued: cancelled", &gameinstance.Record{State: gameinstance.StateQueued, Version: 3}, "", gameinstance.StateFailed, true},
		{"allocating: wait", &gameinstance.Record{State: gameinstance.StateAllocating, Version: 3}, gameinstance.CodeAllocationInProgress, gameinstance.StateAllocating, false},
		{"allocated: left alone", &gameinstance.Record{State: gameinstance.StateAllocated, Version: 3}, "", gameinstance.StateAllocated, false},
		{"linked: left alone", &gameinstance.Record{State: gameinstance.StateLinked, Version: 3}, "", gameinstance.StateLinked, false},
		{"cancelled already", &gameinstance.Record{State: gameinstance.StateFailed, Failure: cancelled, Version: 3}, "", gameinstance.StateFailed, false},
		{"unknown", nil, gameinstance.CodeNotFound, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeStore(1)
			if tt.stored != nil {
				tt.stored.GameInstanceID = "pl"
				f.recs["pl"] = *tt.stored
			}
			svc := &Service{Store: f, Policy: DefaultPolicy, Now: func() time.Time { return now }}
			got, err := svc.CancelPlacement(context.Background(), "pl")
			if gameinstance.CodeOf(err) != tt.wantCode && !(tt.wantCode == "" && err == nil) {
				t.Fatalf("err = %v, want code %q", err, tt.wantCode)
			}
			if got.State != tt.wantState {
				t.Errorf("state %q, want %q", got.State, tt.wantState)
			}
			if wrote := f.recs["pl"].Version != 3; tt.stored != nil && wrote != tt.written {
				t.Errorf("written %v, want %v", wrote, tt.written)
			}
			if tt.written && (got.Failure == nil || got.Failure.Code != gameinstance.CodePlacementCancelled) {
				t.Errorf("cancelled with %+v", got.Failure)
			}
		})
	}
}
