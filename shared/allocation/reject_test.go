package allocation

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// lostReply saves a claim and then reports an error, as a DynamoDB write
// whose reply never arrived; getErr makes reading the record fail too.
type lostReply struct {
	*memStore
	save   bool
	getErr error
}

func (l lostReply) Claim(ctx context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error) {
	if l.save {
		if _, err := l.memStore.Claim(ctx, rec, takeoverBefore); err != nil {
			return gameinstance.Record{}, err
		}
	}
	return gameinstance.Record{}, errors.New("read tcp 127.0.0.1:8000: i/o timeout")
}

func (l lostReply) Get(ctx context.Context, id string) (gameinstance.Record, error) {
	if l.getErr != nil {
		return gameinstance.Record{}, l.getErr
	}
	return l.memStore.Get(ctx, id)
}

func TestReject(t *testing.T) {
	const id = "7c2e9a41-5b0d-4f8e-9d3a-1e6b2c8f4a90"
	tooLarge := gameinstance.Failure{Code: gameinstance.CodeMatchTooLarge, Message: "the match has 201 players"}
	placed := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocated, ClaimID: "c-placed", Fingerprint: gameinstance.Fingerprint{Match: true}}
	rejected := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateFailed, ClaimID: "c-rejected", Fingerprint: gameinstance.Fingerprint{Match: true},
		Failure: &gameinstance.Failure{Code: gameinstance.CodeInvalidMatch, Message: "customEventData names regoin"}}
	apiFailed := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateFailed, ClaimID: "c-api",
		Failure: &gameinstance.Failure{Code: gameinstance.CodeNoCapacity, Message: "no servers"}}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	// A claim whose lease ran out a second ago is in doubt: its server may
	// still link back.
	inDoubt := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocating, ClaimID: "c-in-doubt", Fingerprint: gameinstance.Fingerprint{Match: true},
		LeaseExpiresAt: now.Add(-time.Second)}
	outage := errors.New("dial tcp 127.0.0.1:8000: connect: connection refused")
	for _, tc := range []struct {
		name     string
		existing *gameinstance.Record
		store    func(*memStore) Store
		created  bool
		// kept is the claim id of the record left, "" = Reject's own.
		kept string
		code gameinstance.Code // of the error; "" = none
	}{
		{"a new match is recorded as Failed", nil, nil, true, "", ""},
		{"a placed match keeps its record", &placed, nil, false, "c-placed", ""},
		{"a match rejected before keeps its first failure", &rejected, nil, false, "c-rejected", ""},
		{"a claim in doubt is not taken over", &inDoubt, nil, false, "c-in-doubt", ""},
		{"an API call's Failed record is taken over", &apiFailed, nil, true, "", ""},
		{"saved with its reply lost: created", nil, func(m *memStore) Store { return lostReply{memStore: m, save: true} }, true, "", ""},
		{"lost, and another copy's record there: not created", &placed, func(m *memStore) Store { return lostReply{memStore: m} }, false, "c-placed", ""},
		{"lost, and the record cannot be read", nil, func(m *memStore) Store { return lostReply{memStore: m, getErr: outage} }, false, "-", gameinstance.CodeUnavailable},
		{"the store down", nil, func(m *memStore) Store { m.claimErr = outage; return m }, false, "-", gameinstance.CodeUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, mem := newTestService(&script{})
			if tc.existing != nil {
				mem.records[id] = *tc.existing
			}
			if tc.store != nil {
				svc.o.Store = tc.store(mem)
			}
			svc.o.Now = func() time.Time { return now }
			rec, created, err := svc.Reject(context.Background(), id, tooLarge)
			if tc.code != "" {
				if gameinstance.CodeOf(err) != tc.code || created {
					t.Fatalf("created %v, err %v; want %s", created, err, tc.code)
				}
				if stored, ok := mem.records[id]; ok {
					t.Fatalf("left %+v", stored)
				}
				return
			}
			if err != nil || created != tc.created {
				t.Fatalf("created %v, err %v; want created %v", created, err, tc.created)
			}
			stored := mem.records[id]
			if !reflect.DeepEqual(rec, stored) {
				t.Fatalf("returned %+v, stored %+v", rec, stored)
			}
			if tc.kept != "" {
				if !reflect.DeepEqual(stored, *tc.existing) || stored.ClaimID != tc.kept {
					t.Fatalf("stored %+v, want the record found kept as it was", stored)
				}
				return
			}
			if stored.State != gameinstance.StateFailed || !stored.Fingerprint.Match || stored.Fingerprint != (gameinstance.Fingerprint{Match: true}) ||
				stored.Failure == nil || *stored.Failure != tooLarge || stored.ClaimID == "" || len(stored.Attempts) != 0 {
				t.Fatalf("stored %+v", stored)
			}
			if !stored.CreatedAt.Equal(now) || !stored.UpdatedAt.Equal(now) || !stored.ExpiresAt.Equal(now.Add(svc.o.Retention)) || !stored.HealthDeadline.IsZero() {
				t.Fatalf("times: created %v, updated %v, expires %v, health deadline %v", stored.CreatedAt, stored.UpdatedAt, stored.ExpiresAt, stored.HealthDeadline)
			}
		})
	}
}

func TestRejectAnInvalidID(t *testing.T) {
	svc, mem := newTestService(&script{})
	_, created, err := svc.Reject(context.Background(), "match/1", gameinstance.Failure{Code: gameinstance.CodeInvalidMatch})
	if gameinstance.CodeOf(err) != gameinstance.CodeInvalidRequest || created || len(mem.records) != 0 {
		t.Fatalf("created %v, err %v, records %v", created, err, mem.records)
	}
}

// A match's Failed record is final: a later allocation of the match (a
// late copy of its event) does not place it after all, while an API
// call's Failed record is retried as before.
func TestAMatchsFailureIsFinal(t *testing.T) {
	sixty := 60
	for _, tc := range []struct {
		name  string
		match bool
		// rejected: the record is Reject's; else the failed outcome of
		// the same request.
		rejected bool
		placed   bool
	}{
		{"a match rejected, then allocated", true, true, false},
		{"a match failed, then allocated again", true, false, false},
		{"an API call's failure is retried", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &script{queue: map[string][]error{"eu": {status(404, 0)}}}
			svc, mem := newTestService(alloc)
			req := Request{GameInstanceID: "m-1", QueueTimeoutSeconds: &sixty}
			allocate := svc.Allocate
			if tc.match {
				allocate = svc.AllocateMatch
			}
			if tc.rejected {
				if _, created, err := svc.Reject(context.Background(), "m-1", gameinstance.Failure{Code: gameinstance.CodeInvalidMatch}); err != nil || !created {
					t.Fatalf("reject: %v, %v", created, err)
				}
			} else if _, err := allocate(context.Background(), req); codeOf(err) == "" || mem.records["m-1"].State != gameinstance.StateFailed {
				t.Fatalf("the first allocation: err %v, record %+v", err, mem.records["m-1"])
			}
			before, calls := mem.records["m-1"], len(alloc.calls)
			alloc.queue["eu"] = []error{nil}
			res, err := allocate(context.Background(), req)
			after := mem.records["m-1"]
			if !tc.placed {
				if len(alloc.calls) != calls || !reflect.DeepEqual(after, before) || (err == nil && res.Record.State == gameinstance.StateAllocated) {
					t.Fatalf("%+v, err %v after %d more calls; the record %+v, was %+v", res, err, len(alloc.calls)-calls, after, before)
				}
				return
			}
			if err != nil || len(alloc.calls) != calls+1 || after.State != gameinstance.StateAllocated {
				t.Fatalf("%+v, err %v after %d more calls", res, err, len(alloc.calls)-calls)
			}
		})
	}
}

func codeOf(err error) gameinstance.Code {
	if err == nil {
		return ""
	}
	return gameinstance.CodeOf(err)
}
