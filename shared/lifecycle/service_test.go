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

// The index key moves at most once per IndexStep, never past the deadline
// and never within a Period of the heartbeat.
func TestHeartbeatIndexDeadline(t *testing.T) {
	p := DefaultPolicy
	start := time.Date(2026, 11, 23, 12, 0, 7, 0, time.UTC)
	moves, last := 0, time.Time{}
	for at := start; at.Before(start.Add(10 * time.Minute)); at = at.Add(p.Period / 3) {
		key := p.HeartbeatIndexDeadline(at)
		exact := at.Add(p.Period * time.Duration(p.FailureThreshold))
		if key.After(exact) || !key.After(exact.Add(-p.IndexStep())) || !key.After(at.Add(p.Period)) {
			t.Fatalf("heartbeat at %v: key %v, deadline %v", at, key, exact)
		}
		if !key.Equal(last) {
			moves, last = moves+1, key
		}
	}
	if want := int(10*time.Minute/p.IndexStep()) + 1; moves > want {
		t.Errorf("%d index moves in 10 minutes of heartbeats every %v, want at most %d", moves, p.Period/3, want)
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
