package allocation

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// memStore is an in-memory Store with the same claim rules as the DynamoDB
// one; the real store is exercised against DynamoDB Local in tests/.
func TestAllocateFallbackDecisions(t *testing.T) {
	tests := []struct {
		name         string
		queue        map[string][]error
		wantCalls    []string
		wantRegion   string
		wantFallback bool
		wantCode     gameinstance.Code
		wantTokens   []string
		// split: us-west and eu are behind different Allocators.
		split bool
		// wantAttempts, when not len(wantCalls): attempts include skips.
		wantAttempts int
	}{
		{name: "primary succeeds", queue: map[string][]error{"us-west": {nil}},
			wantCalls: []string{"us-west"}, wantRegion: "us-west"},
		{name: "primary 500, fallback succeeds", queue: map[string][]error{"us-west": {status(500, 0)}, "eu": {nil}},
			wantCalls: []string{"us-west", "eu"}, wantRegion: "eu", wantFallback: true},
		{name: "primary timeout, fallback succeeds", queue: map[string][]error{"us-west": {timeout}, "eu": {nil}},
			wantCalls: []string{"us-west", "eu"}, wantRegion: "eu", wantFallback: true},
		{name: "429 retried in region before success", queue: map[string][]error{"us-west": {status(429, 0), status(429, time.Millisecond), nil}},
			wantCalls: []string{"us-west", "us-west", "us-west"}, wantRegion: "us-west"},
		{name: "429 exhausted skips the same Allocator's fallback", queue: map[string][]error{"us-west": {status(429, 0), status(429, 0), status(429, 0)}, "eu": {nil}},
			wantCalls: []string{"us-west", "us-west", "us-west"}, wantAttempts: 4, wantCode: gameinstance.CodeRateLimited},
		{name: "429 exhausted then fallback behind another Allocator", split: true, queue: map[string][]error{"us-west": {status(429, 0), status(429, 0), status(429, 0)}, "eu": {nil}},
			wantCalls: []string{"us-west", "us-west", "us-west", "eu"}, wantRegion: "eu", wantFallback: true},
		{name: "long Retry-After moves on at once to another Allocator", split: true, queue: map[string][]error{"us-west": {status(429, time.Hour)}, "eu": {nil}},
			wantCalls: []string{"us-west", "eu"}, wantRegion: "eu", wantFallback: true},
		{name: "rate-limited on one Allocator, no capacity on the other", split: true, queue: map[string][]error{"us-west": {status(429, time.Hour)}, "eu": {status(503, 0)}},
			wantCalls: []string{"us-west", "eu"}, wantCode: gameinstance.CodeRateLimited},
		{name: "429 retried into 503 is no capacity", queue: map[string][]error{"us-west": {status(429, 0), status(503, 0)}, "eu": {status(404, 0)}},
			wantCalls: []string{"us-west", "us-west", "eu"}, wantCode: gameinstance.CodeNoCapacity},
		{name: "401 refreshes the token once and retries", queue: map[string][]error{"us-west": {status(401, 0), nil}},
			wantCalls: []string{"us-west", "us-west"}, wantRegion: "us-west", wantTokens: []string{"old", "new"}},
		{name: "401 twice falls back with the fresh token", queue: map[string][]error{"us-west": {status(401, 0), status(401, 0)}, "eu": {nil}},
			wantCalls: []string{"us-west", "us-west", "eu"}, wantRegion: "eu", wantFallback: true, wantTokens: []string{"old", "new", "new"}},
		{name: "no capacity anywhere", queue: map[string][]error{"us-west": {status(404, 0)}, "eu": {status(503, 0)}},
			wantCalls: []string{"us-west", "eu"}, wantCode: gameinstance.CodeNoCapacity},
		{name: "timeouts everywhere", queue: map[string][]error{"us-west": {timeout}, "eu": {timeout}},
			wantCalls: []string{"us-west", "eu"}, wantCode: gameinstance.CodeUpstreamTimeout},
		{name: "bad gateway", queue: map[string][]error{"us-west": {status(403, 0)}, "eu": {status(502, 0)}},
			wantCalls: []string{"us-west", "eu"}, wantCode: gameinstance.CodeAllocationFailed},
		// An Agones allocator's answers, as shared/allocators classifies them.
		{name: "an unallocated 429 is no capacity: the fallback is asked", split: true, queue: map[string][]error{"us-west": {noServer}, "eu": {nil}},
			wantCalls: []string{"us-west", "eu"}, wantRegion: "eu", wantFallback: true},
		{name: "unallocated everywhere is NO_CAPACITY, not RATE_LIMITED", split: true, queue: map[string][]error{"us-west": {noServer}, "eu": {noServer}},
			wantCalls: []string{"us-west", "eu"}, wantCode: gameinstance.CodeNoCapacity},
		{name: "contention retried in region", queue: map[string][]error{"us-west": {contended, nil}},
			wantCalls: []string{"us-west", "us-west"}, wantRegion: "us-west"},
		{name: "contention retried twice, then no capacity there", split: true, queue: map[string][]error{"us-west": {contended, contended, contended}, "eu": {nil}},
			wantCalls: []string{"us-west", "us-west", "us-west", "eu"}, wantRegion: "eu", wantFallback: true},
		{name: "refused credentials are not retried, nor refreshed", split: true, queue: map[string][]error{"us-west": {refused}, "eu": {nil}},
			wantCalls: []string{"us-west", "eu"}, wantRegion: "eu", wantFallback: true, wantTokens: []string{"old", "old"}},
		{name: "an answer that is not an allocation", split: true, queue: map[string][]error{"us-west": {invalidAnswer}, "eu": {noServer}},
			wantCalls: []string{"us-west", "eu"}, wantCode: gameinstance.CodeUpstreamInvalidResponse},
		{name: "an answer that is not an allocation, and a timeout", split: true, queue: map[string][]error{"us-west": {invalidAnswer}, "eu": {timeout}},
			wantCalls: []string{"us-west", "eu"}, wantCode: gameinstance.CodeAllocationFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &script{queue: tc.queue}
			svc, store := newTestService(alloc)
			if tc.split {
				svc.o.Upstreams = splitAllocators{alloc: alloc, tokens: svc.o.Tokens, ids: map[string]string{"eu": "eu-allocator"}}
			}
			if tc.wantAttempts == 0 {
				tc.wantAttempts = len(tc.wantCalls)
			}
			res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-1", DesiredRegion: "us-west"})
			if !reflect.DeepEqual(alloc.calls, tc.wantCalls) {
				t.Fatalf("calls = %v, want %v", alloc.calls, tc.wantCalls)
			}
			if tc.wantTokens != nil && !reflect.DeepEqual(alloc.tokens, tc.wantTokens) {
				t.Fatalf("tokens = %v, want %v", alloc.tokens, tc.wantTokens)
			}
			stored, _ := store.Get(context.Background(), "gi-1")
			if tc.wantCode != "" {
				var e *gameinstance.Error
				if !errors.As(err, &e) || e.Code != tc.wantCode || len(e.Attempts) != tc.wantAttempts {
					t.Fatalf("err = %v, want %s with %d attempts", err, tc.wantCode, tc.wantAttempts)
				}
				if stored.State != gameinstance.StateFailed || stored.Failure == nil || stored.Failure.Code != tc.wantCode {
					t.Fatalf("stored = %+v, want Failed %s", stored, tc.wantCode)
				}
				return
			}
			if err != nil || !res.Created || res.Record.Region != tc.wantRegion || res.Record.FallbackUsed != tc.wantFallback {
				t.Fatalf("Allocate = %+v, %v; want region %s fallback %v", res, err, tc.wantRegion, tc.wantFallback)
			}
			if stored.State != gameinstance.StateAllocated || len(stored.Attempts) != tc.wantAttempts {
				t.Fatalf("stored = %+v", stored)
			}
		})
	}
}

func newTestService(alloc Allocator) (*Service, *memStore) {
	store := &memStore{records: map[string]gameinstance.Record{}}
	o := DefaultOptions()
	o.Store, o.Allocator, o.Tokens = store, alloc, &tokens{current: "old", next: "new"}
	o.Defaults.Region, o.Defaults.Environment, o.Defaults.ArmadaSet = "eu", "prag", "fleet"
	o.BackendAddress = "https://backend.example"
	o.Retry = &RetryPolicy{Max429Retries: 2, BaseBackoff: time.Millisecond, MaxWait: 10 * time.Millisecond,
		MaxContentionRetries: 2, ContentionBackoff: time.Millisecond}
	svc := NewService(o)
	return svc, store
}

func TestAllocatePayloadAndTokens(t *testing.T) {
	alloc := &script{queue: map[string][]error{"eu": {nil}}}
	svc, store := newTestService(alloc)
	if _, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-1", GameServerVersion: "dev::arena", ServerArgs: "-map=x", PartnerSocialToken: "social"}); err != nil {
		t.Fatal(err)
	}
	p := alloc.last.Payload
	if p.GameInstanceID != "gi-1" || p.PragmaBackendAddress != "https://backend.example" || p.ServerArgs != "-map=x" || p.PartnerSocialToken != "social" {
		t.Fatalf("payload = %+v", p)
	}
	if len(p.PartnerGameToken) < 43 { // 256 bits base64url
		t.Fatalf("minted token %q is shorter than 256 bits", p.PartnerGameToken)
	}
	if got := [2]string{alloc.last.Environment, alloc.last.ArmadaSet}; got != [2]string{"dev", "arena"} {
		t.Fatalf("environment and armada set = %v", got)
	}
	rec, _ := store.Get(context.Background(), "gi-1")
	if rec.PartnerGameTokenHash != gameinstance.HashToken(p.PartnerGameToken) || strings.Contains(rec.PartnerGameTokenHash, p.PartnerGameToken) {
		t.Fatalf("stored hash %q does not match the minted token", rec.PartnerGameTokenHash)
	}
}

func TestAllocateIdempotency(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {nil}}}
	svc, store := newTestService(alloc)
	ctx := context.Background()
	req := Request{GameInstanceID: "gi-1", DesiredRegion: "us-west", GameServerVersion: "dev::arena"}
	if _, err := svc.Allocate(ctx, req); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Allocate(ctx, Request{GameInstanceID: "gi-1", DesiredRegion: " US-WEST", GameServerVersion: "dev::arena"})
	if err != nil || res.Created || res.Record.State != gameinstance.StateAllocated || len(alloc.calls) != 1 {
		t.Fatalf("replay = %+v, %v after %d calls; want the stored result", res, err, len(alloc.calls))
	}
	req.ServerArgs = "-different"
	if _, err := svc.Allocate(ctx, req); gameinstance.CodeOf(err) != gameinstance.CodeIdempotencyMismatch {
		t.Fatalf("mismatch err = %v", err)
	}

	// An in-flight claim blocks; an expired one can be taken over.
	store.records["gi-2"] = gameinstance.Record{GameInstanceID: "gi-2", State: gameinstance.StateAllocating, ClaimID: "x",
		Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west"}, LeaseExpiresAt: time.Now().Add(30 * time.Second)}
	_, err = svc.Allocate(ctx, Request{GameInstanceID: "gi-2", DesiredRegion: "us-west"})
	var e *gameinstance.Error
	if !errors.As(err, &e) || e.Code != gameinstance.CodeAllocationInProgress || e.RetryAfter < 29*time.Second {
		t.Fatalf("in-flight err = %v, want ALLOCATION_IN_PROGRESS with Retry-After ~30s", err)
	}
	// An expired claim is in doubt while a server it allocated could still
	// link back; only then may it be taken over.
	store.records["gi-2"] = gameinstance.Record{GameInstanceID: "gi-2", State: gameinstance.StateAllocating, ClaimID: "x",
		Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west"}, LeaseExpiresAt: time.Now().Add(-time.Second)}
	_, err = svc.Allocate(ctx, Request{GameInstanceID: "gi-2", DesiredRegion: "us-west"})
	if !errors.As(err, &e) || e.Code != gameinstance.CodeAllocationInProgress || e.RetryAfter < svc.o.LinkTimeout-2*time.Second || len(alloc.calls) != 1 {
		t.Fatalf("in-doubt err = %v after %d calls, want ALLOCATION_IN_PROGRESS until the link timeout, no call", err, len(alloc.calls))
	}
	store.records["gi-2"] = gameinstance.Record{GameInstanceID: "gi-2", State: gameinstance.StateAllocating, ClaimID: "x",
		Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west"}, LeaseExpiresAt: time.Now().Add(-svc.o.LinkTimeout - time.Second)}
	alloc.queue["us-west"] = []error{nil}
	if res, err := svc.Allocate(ctx, Request{GameInstanceID: "gi-2", DesiredRegion: "us-west"}); err != nil || !res.Created {
		t.Fatalf("takeover = %+v, %v", res, err)
	}
}

// Dependency failures: what the caller is told, and what is left behind.
func TestAllocateDependencyFailures(t *testing.T) {
	outage := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	tests := []struct {
		name      string
		setup     func(*Service, *memStore)
		wantCode  gameinstance.Code
		wantCalls int
		wantState gameinstance.State // "" = no record
	}{
		{"secret missing", func(s *Service, _ *memStore) { setTokens(s, failingTokens{permanentErr{outage}}) }, gameinstance.CodeInternal, 0, ""},
		{"Secrets Manager down", func(s *Service, _ *memStore) { setTokens(s, failingTokens{outage}) }, gameinstance.CodeUnavailable, 0, ""},
		{"DynamoDB down at claim", func(_ *Service, m *memStore) { m.claimErr = outage }, gameinstance.CodeUnavailable, 0, ""},
		{"DynamoDB down after GameFabric allocated", func(_ *Service, m *memStore) { m.finishErr = outage }, gameinstance.CodeUnavailable, 1, gameinstance.StateAllocating},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &script{queue: map[string][]error{"us-west": {nil}}}
			svc, store := newTestService(alloc)
			tc.setup(svc, store)
			_, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-d", DesiredRegion: "us-west"})
			var e *gameinstance.Error
			if !errors.As(err, &e) || e.Code != tc.wantCode || len(alloc.calls) != tc.wantCalls {
				t.Fatalf("err = %v after %d calls, want %s after %d", err, len(alloc.calls), tc.wantCode, tc.wantCalls)
			}
			if e.Code == gameinstance.CodeUnavailable && e.RetryAfter < time.Second {
				t.Fatalf("Retry-After = %v, want at least 1s", e.RetryAfter)
			}
			if rec, ok := store.records["gi-d"]; ok != (tc.wantState != "") || rec.State != tc.wantState {
				t.Fatalf("left %+v, want state %q", rec, tc.wantState)
			}
		})
	}
}

func TestAllocateRedactsEchoedSecrets(t *testing.T) {
	echo := &UpstreamError{Kind: UpstreamStatus, Status: 400, Message: "bad", Body: `{"error":"token old is invalid"}`}
	alloc := &script{queue: map[string][]error{"eu": {echo}}}
	svc, _ := newTestService(alloc)
	setTokens(svc, &tokens{current: "supersecret-token", next: "supersecret-token"})
	echo.Body = `{"error":"token supersecret-token is invalid"}`
	_, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-1"})
	var e *gameinstance.Error
	if !errors.As(err, &e) || len(e.Attempts) != 1 {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(e.Attempts[0].Body, "supersecret") || !strings.Contains(e.Attempts[0].Body, "[redacted]") {
		t.Fatalf("attempt body = %q, want the token redacted", e.Attempts[0].Body)
	}
}

// A token read after a 401 is as secret as the one it replaced.
func TestAllocateRedactsARefreshedToken(t *testing.T) {
	echo := &UpstreamError{Kind: UpstreamStatus, Status: 401, Message: "no", Body: `{"error":"token rotated-secret-2 is revoked"}`}
	alloc := &script{queue: map[string][]error{"eu": {status(401, 0), echo}}}
	svc, _ := newTestService(alloc)
	setTokens(svc, &tokens{current: "rotated-secret-1", next: "rotated-secret-2"})
	_, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-1"})
	var e *gameinstance.Error
	if !errors.As(err, &e) || len(e.Attempts) != 2 {
		t.Fatalf("err = %v", err)
	}
	if b := e.Attempts[1].Body; strings.Contains(b, "rotated-secret") || !strings.Contains(b, "[redacted]") {
		t.Fatalf("attempt body = %q, want the refreshed token redacted", b)
	}
}

func TestAllocateWithRegionHealth(t *testing.T) {
	tests := []struct {
		name         string
		skip         map[string]bool
		unknown      map[string]bool
		queue        map[string][]error
		wantCalls    []string
		wantReasons  []string
		wantObserved []string
	}{
		{"unhealthy primary skipped", map[string]bool{"us-west": true}, nil, map[string][]error{"eu": {nil}},
			[]string{"eu"}, []string{"requested; skipped: unhealthy: circuit open", "fallback"}, []string{"eu:true"}},
		{"every region unhealthy: tried anyway", map[string]bool{"us-west": true, "eu": true}, nil, map[string][]error{"us-west": {status(503, 0)}, "eu": {nil}},
			[]string{"us-west", "eu"}, []string{"requested; unhealthy, tried anyway: every candidate region is unhealthy", "fallback; unhealthy, tried anyway: every candidate region is unhealthy"},
			[]string{"us-west:false", "eu:true"}},
		{"429 and 401 say nothing about a region", nil, nil, map[string][]error{"us-west": {status(429, time.Hour)}, "eu": {status(401, 0), status(401, 0)}},
			[]string{"us-west", "eu", "eu"}, []string{"requested", "fallback", "fallback"}, nil},
		{"a region skipped for its Allocator's rate limit says nothing either", nil, nil, map[string][]error{"us-west": {status(429, time.Hour)}},
			[]string{"us-west"}, []string{"requested", "fallback"}, nil},
		{"no matching server (404, 409) is one armada set's shortage", nil, nil, map[string][]error{"us-west": {status(404, 0)}, "eu": {status(409, 0)}},
			[]string{"us-west", "eu"}, []string{"requested", "fallback"}, nil},
		{"an Agones allocator's unallocated answer and a refusal of our certificate say nothing either", nil, nil,
			map[string][]error{"us-west": {noServer}, "eu": {refused}}, []string{"us-west", "eu"}, []string{"requested", "fallback"}, nil},
		{"an Agones allocator's contention says nothing either", nil, nil,
			map[string][]error{"us-west": {contended, contended, contended}, "eu": {noServer}}, []string{"us-west", "us-west", "us-west", "eu"},
			[]string{"requested", "requested", "requested", "fallback"}, nil},
		{"timeouts and 5xx are the region's", nil, nil, map[string][]error{"us-west": {timeout}, "eu": {status(502, 0)}},
			[]string{"us-west", "eu"}, []string{"requested", "fallback"}, []string{"us-west:false", "eu:false"}},
		{"an unknown region's failures are not recorded", nil, map[string]bool{"us-west": true, "eu": true}, map[string][]error{"us-west": {status(503, 0)}, "eu": {status(503, 0)}},
			[]string{"us-west", "eu"}, []string{"requested", "fallback"}, []string{"eu:false"}}, // eu is FALLBACK_REGION: configured, so known
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &script{queue: tc.queue}
			svc, _ := newTestService(alloc)
			health := &fakeHealth{skip: tc.skip, unknown: tc.unknown}
			svc.o.Health = health
			if tc.queue["eu"] != nil { // eu answers: put it behind its own Allocator
				svc.o.Upstreams = splitAllocators{alloc: alloc, tokens: svc.o.Tokens, ids: map[string]string{"eu": "eu-allocator"}}
			}
			res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-h", DesiredRegion: "us-west"})
			var attempts []gameinstance.Attempt
			if err != nil {
				var e *gameinstance.Error
				errors.As(err, &e)
				attempts = e.Attempts
			} else {
				attempts = res.Record.Attempts
			}
			var reasons []string
			for _, a := range attempts {
				reasons = append(reasons, a.Reason)
			}
			if !reflect.DeepEqual(alloc.calls, tc.wantCalls) || !reflect.DeepEqual(reasons, tc.wantReasons) || !reflect.DeepEqual(health.observed, tc.wantObserved) {
				t.Fatalf("calls %v reasons %q observed %v", alloc.calls, reasons, health.observed)
			}
		})
	}
}

// Each plan step's server gets its own link-back token, so the orphan of a
// step that timed out (GameFabric may still have allocated it) cannot link.
func TestAllocateMintsATokenPerPlanStep(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {timeout}, "eu": {nil}}}
	svc, store := newTestService(alloc)
	var claimed gameinstance.Record
	svc.o.Store = claimSpy{store, &claimed}
	res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-t", DesiredRegion: "us-west"})
	if err != nil || len(alloc.partner) != 2 {
		t.Fatalf("allocate = %v after calls %v", err, alloc.calls)
	}
	orphan, winner := alloc.partner[0], alloc.partner[1]
	if orphan == winner {
		t.Fatal("both steps were sent the same token")
	}
	if res.Record.PartnerGameTokenHash != gameinstance.HashToken(winner) || res.Record.CandidateTokenHashes != nil {
		t.Fatalf("recorded hash %q candidates %v, want only the winner's", res.Record.PartnerGameTokenHash, res.Record.CandidateTokenHashes)
	}
	if !reflect.DeepEqual(claimed.CandidateTokenHashes, []string{gameinstance.HashToken(orphan), gameinstance.HashToken(winner)}) {
		t.Fatalf("claim candidates = %v, want both steps' hashes", claimed.CandidateTokenHashes)
	}

	// A caller's own token is theirs to share between steps.
	alloc.queue = map[string][]error{"us-west": {timeout}, "eu": {nil}}
	alloc.partner = nil
	own := strings.Repeat("k", 32)
	res, err = svc.Allocate(context.Background(), Request{GameInstanceID: "gi-u", DesiredRegion: "us-west", PartnerGameToken: own})
	if err != nil || !reflect.DeepEqual(alloc.partner, []string{own, own}) || claimed.CandidateTokenHashes != nil {
		t.Fatalf("caller token: err %v, sent %v, candidates %v", err, alloc.partner, claimed.CandidateTokenHashes)
	}
}

type claimSpy struct {
	*memStore
	claimed *gameinstance.Record
}

func (c claimSpy) Claim(ctx context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error) {
	*c.claimed = rec
	return c.memStore.Claim(ctx, rec, takeoverBefore)
}

func (c claimSpy) Resume(ctx context.Context, rec gameinstance.Record, ticket string) error {
	*c.claimed = rec
	return c.memStore.Resume(ctx, rec, ticket)
}
