package allocation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Stand-ins for the service's ports, shared by its tests.

type memStore struct {
	mu      sync.Mutex
	records map[string]gameinstance.Record
	// claimErr and finishErr stand in for DynamoDB being unreachable.
	claimErr, finishErr error
}

func (m *memStore) Claim(_ context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claimErr != nil {
		return gameinstance.Record{}, m.claimErr
	}
	// As the DynamoDB store's condition: a match's or a GameLift
	// placement's Failed record is final.
	final := func(r gameinstance.Record) bool { return r.Fingerprint.Match || r.Fingerprint.GameLift != "" }
	if old, ok := m.records[rec.GameInstanceID]; ok && !(old.State == gameinstance.StateFailed && !final(old)) &&
		!(old.State == gameinstance.StateAllocating && old.LeaseExpiresAt.Before(takeoverBefore)) {
		return gameinstance.Record{}, &gameinstance.ClaimConflictError{Existing: old}
	}
	m.records[rec.GameInstanceID] = rec
	return rec, nil
}

func (m *memStore) Finish(_ context.Context, rec gameinstance.Record) (gameinstance.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finishErr != nil {
		return gameinstance.Record{}, m.finishErr
	}
	if old := m.records[rec.GameInstanceID]; old.ClaimID != rec.ClaimID || old.State != gameinstance.StateAllocating {
		return gameinstance.Record{}, gameinstance.ErrClaimLost
	}
	m.records[rec.GameInstanceID] = rec
	return rec, nil
}

func (m *memStore) Resume(_ context.Context, rec gameinstance.Record, ticket string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.records[rec.GameInstanceID]
	switch {
	case !ok:
		return gameinstance.ErrNotFound
	case old.State != gameinstance.StateQueued || old.Queue == nil || old.Queue.Ticket != ticket:
		return &gameinstance.ClaimConflictError{Existing: old}
	}
	m.records[rec.GameInstanceID] = rec
	return nil
}

func (m *memStore) Get(_ context.Context, id string) (gameinstance.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.records[id]; ok {
		return r, nil
	}
	return gameinstance.Record{}, gameinstance.ErrNotFound
}

// script answers allocate calls per region from a queue of responses.
type script struct {
	mu     sync.Mutex
	queue  map[string][]error // nil error = success
	calls  []string
	tokens []string
	last   UpstreamRequest
	// partner is each call's PartnerGameToken.
	partner []string
}

// agonesRoom, queued as a script's answer, is an Allocator's room: an
// Agones allocation whose rooms Counter went above 1.
var agonesRoom = errors.New("scripted: a room the Allocator keeps")

func (s *script) Allocate(_ context.Context, token string, req UpstreamRequest) (Allocated, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls, s.tokens, s.last = append(s.calls, req.Region), append(s.tokens, token), req
	s.partner = append(s.partner, req.Payload.PartnerGameToken)
	q := s.queue[req.Region]
	if len(q) == 0 {
		return Allocated{}, &UpstreamError{Kind: UpstreamStatus, Status: http.StatusInternalServerError, Message: "unscripted"}
	}
	err := q[0]
	s.queue[req.Region] = q[1:]
	server := &gameinstance.Server{Address: "10.0.0.1:7777", IP: "10.0.0.1", Ports: map[string]int{"game": 7777}}
	switch err {
	case nil:
		return Allocated{Server: server}, nil
	case agonesRoom:
		return Allocated{Server: server, Room: true, GameServerName: "fleet-abc12", NodeName: "node-1"}, nil
	}
	return Allocated{}, err
}

type tokens struct{ current, next string }

func (t *tokens) Token(context.Context) (string, error) { return t.current, nil }
func (t *tokens) Refresh(_ context.Context, stale string) (string, error) {
	if t.current == stale {
		t.current = t.next
	}
	return t.current, nil
}

func status(code int, retryAfter time.Duration) error {
	return &UpstreamError{Kind: UpstreamStatus, Status: code, Message: http.StatusText(code), RetryAfter: retryAfter, Body: `{"error":"x"}`}
}

var timeout = &UpstreamError{Kind: UpstreamTimeout, Message: "no answer", MayHaveAllocated: true}

// An Agones allocator's answers, as its adapter classifies them.
var (
	noServer      = &UpstreamError{Kind: UpstreamNoCapacity, Status: 429, Message: "there is no available GameServer to allocate"}
	contended     = &UpstreamError{Kind: UpstreamContention, Status: 409, Message: "too many concurrent requests have overwhelmed the system"}
	refused       = &UpstreamError{Kind: UpstreamRefused, Status: 401, Message: "the Agones allocator refused our client certificate"}
	invalidAnswer = &UpstreamError{Kind: UpstreamInvalid, Status: 200, Message: "response has no ports", MayHaveAllocated: true}
)

type permanentErr struct{ error }

func (permanentErr) Permanent() bool { return true }

type failingTokens struct{ err error }

func (f failingTokens) Token(context.Context) (string, error)           { return "", f.err }
func (f failingTokens) Refresh(context.Context, string) (string, error) { return "", f.err }

type fakeHealth struct {
	skip     map[string]bool
	unknown  map[string]bool // regions without a health record
	observed []string
}

func (f *fakeHealth) Admit(_ context.Context, regions []string) []region.Verdict {
	out := make([]region.Verdict, len(regions))
	for i, r := range regions {
		out[i] = region.Verdict{Try: !f.skip[r], Reason: "unhealthy: circuit open", Known: !f.unknown[r]}
		if out[i].Try {
			out[i].Reason = ""
		}
	}
	return out
}

func (f *fakeHealth) Observe(_ context.Context, region string, ok bool) {
	f.observed = append(f.observed, fmt.Sprintf("%s:%v", region, ok))
}
