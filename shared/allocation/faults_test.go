package allocation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// lossyStore saves a write and then fails it, as DynamoDB does when the
// write is saved and its reply lost after the SDK's retries; or fails it
// without saving.
type lossyStore struct {
	*memStore
	claimSavedErr, finishSavedErr error // saved, then this error
	finishLost                    bool  // another claim took over first
	events                        *[]string
}

func (l lossyStore) Claim(ctx context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error) {
	if stored, err := l.memStore.Claim(ctx, rec, takeoverBefore); err != nil || l.claimSavedErr == nil {
		return stored, err
	}
	return gameinstance.Record{}, l.claimSavedErr
}

func (l lossyStore) Finish(ctx context.Context, rec gameinstance.Record) (gameinstance.Record, error) {
	if l.events != nil {
		*l.events = append(*l.events, "finish")
	}
	if l.finishLost {
		l.records[rec.GameInstanceID] = gameinstance.Record{GameInstanceID: rec.GameInstanceID, State: gameinstance.StateAllocating, ClaimID: "someone-else"}
	}
	stored, err := l.memStore.Finish(ctx, rec)
	if err != nil || l.finishSavedErr == nil {
		return stored, err
	}
	return gameinstance.Record{}, l.finishSavedErr
}

// A write saved whose reply never came is the call's own success: the
// record is read back, and the caller gets what is stored.
func TestAllocateRecognisesItsOwnWrites(t *testing.T) {
	lost := errors.New("read tcp: connection reset by peer")
	tests := []struct {
		name      string
		store     func(*memStore) Store
		queue     map[string][]error
		wantCode  gameinstance.Code // "" = 201
		wantState gameinstance.State
	}{
		{"claim saved, reply lost", func(m *memStore) Store { return lossyStore{memStore: m, claimSavedErr: lost} },
			map[string][]error{"us-west": {nil}}, "", gameinstance.StateAllocated},
		{"outcome saved, reply lost", func(m *memStore) Store { return lossyStore{memStore: m, finishSavedErr: lost} },
			map[string][]error{"us-west": {nil}}, "", gameinstance.StateAllocated},
		{"failure saved, reply lost", func(m *memStore) Store { return lossyStore{memStore: m, finishSavedErr: lost} },
			map[string][]error{"us-west": {status(404, 0)}, "eu": {status(503, 0)}}, gameinstance.CodeNoCapacity, gameinstance.StateFailed},
		{"claim taken over before the outcome", func(m *memStore) Store { return lossyStore{memStore: m, finishLost: true} },
			map[string][]error{"us-west": {nil}}, gameinstance.CodeUnavailable, gameinstance.StateAllocating},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &script{queue: tc.queue}
			svc, mem := newTestService(alloc)
			svc.o.Store = tc.store(mem)
			res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-l", DesiredRegion: "us-west"})
			if gameinstance.CodeOf(err) != tc.wantCode && !(tc.wantCode == "" && err == nil) {
				t.Fatalf("err = %v, want %q", err, tc.wantCode)
			}
			if tc.wantCode == "" && (!res.Created || res.Record.State != tc.wantState || res.Record.Server == nil) {
				t.Fatalf("result = %+v, want a created %s record with its server", res, tc.wantState)
			}
			var e *gameinstance.Error
			if errors.As(err, &e) && e.Code != gameinstance.CodeInternal && e.RetryAfter < time.Second {
				t.Fatalf("%s without Retry-After", e.Code)
			}
			if got := mem.records["gi-l"].State; got != tc.wantState {
				t.Fatalf("stored %s, want %s", got, tc.wantState)
			}
			if calls := len(alloc.calls); calls != len(tc.queue) {
				t.Fatalf("%d upstream calls, want %d", calls, len(tc.queue))
			}
		})
	}
}

// blockingAllocator answers only when the attempt's context ends.
type blockingAllocator struct{ calls []string }

func (b *blockingAllocator) Allocate(ctx context.Context, _ string, req UpstreamRequest) (Allocated, error) {
	b.calls = append(b.calls, req.Region)
	<-ctx.Done()
	return Allocated{}, &UpstreamError{Kind: UpstreamTimeout, Message: "no answer before the attempt timeout", MayHaveAllocated: true, Err: ctx.Err()}
}

// The whole allocation fits its budget, measured from its start: attempts
// stop early enough to keep the outcome reserve, the caller is answered
// UPSTREAM_TIMEOUT with Retry-After, and the record is Failed.
func TestAllocateBudget(t *testing.T) {
	tests := []struct {
		name     string
		budget   time.Duration
		deadline time.Duration // the Lambda's, 0 = none
		wantMax  time.Duration // the answer comes within this
	}{
		{"budget", 4 * time.Second, 0, 4 * time.Second},
		{"the Lambda's deadline comes first", time.Minute, 4500 * time.Millisecond, 4 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &blockingAllocator{}
			svc, store := newTestService(alloc)
			svc.o.Budget, svc.o.AttemptTimeout = tc.budget, 10*time.Second
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			start := time.Now()
			_, err := svc.Allocate(ctx, Request{GameInstanceID: "gi-b", DesiredRegion: "us-west"})
			took := time.Since(start)
			var e *gameinstance.Error
			if !errors.As(err, &e) || e.Code != gameinstance.CodeUpstreamTimeout || e.RetryAfter < time.Second {
				t.Fatalf("err = %v, want UPSTREAM_TIMEOUT with Retry-After", err)
			}
			// The reserve (3 s write + 0.5 s read back) was kept: the one
			// attempt ended 3.5 s before the budget's end.
			if took > tc.wantMax-OutcomeReserve || took < tc.wantMax-OutcomeReserve-confirmReserve-200*time.Millisecond {
				t.Fatalf("answered after %s, want about %s", took, tc.wantMax-OutcomeReserve-confirmReserve)
			}
			if len(alloc.calls) != 1 || len(e.Attempts) != 2 || !strings.HasPrefix(e.Attempts[1].Error, "not tried") || !e.Attempts[0].SuspectedOrphan {
				t.Fatalf("calls %v attempts %+v, want one timed-out attempt (a suspected orphan) and the fallback skipped", alloc.calls, e.Attempts)
			}
			if rec := store.records["gi-b"]; rec.State != gameinstance.StateFailed || rec.Failure.Code != gameinstance.CodeUpstreamTimeout {
				t.Fatalf("stored %+v, want Failed UPSTREAM_TIMEOUT", rec)
			}
		})
	}
}

type spyMetrics struct{ got []Outcome }

func (s *spyMetrics) Allocated(o Outcome) { s.got = append(s.got, o) }

type orderedHealth struct {
	fakeHealth
	events *[]string
}

func (o *orderedHealth) Observe(ctx context.Context, region string, ok bool) {
	*o.events = append(*o.events, "observe "+region)
	o.fakeHealth.Observe(ctx, region, ok)
}

// Suspected orphans are counted by region (invented names as "other"), and
// region health is written after the outcome, never before it.
func TestAllocateSuspectedOrphansAndHealthAfterOutcome(t *testing.T) {
	alloc := &script{queue: map[string][]error{"made-up": {timeout}, "us-west": {&UpstreamError{Kind: UpstreamDecode, Message: "lists 40000 ports", MayHaveAllocated: true}}, "eu": {nil}}}
	svc, mem := newTestService(alloc)
	var events []string
	metrics := &spyMetrics{}
	svc.o.Metrics = metrics
	svc.o.Health = &orderedHealth{fakeHealth{unknown: map[string]bool{"made-up": true}}, &events}
	svc.o.Store = lossyStore{memStore: mem, events: &events}
	res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-o", PreferredRegions: []string{"made-up", "us-west"}})
	if err != nil || res.Record.Region != "eu" {
		t.Fatalf("allocate = %+v, %v", res, err)
	}
	if strings.Join(events, ",") != "finish,observe us-west,observe eu" {
		t.Fatalf("events %v, want the outcome written before region health (and nothing for the made-up region)", events)
	}
	o := metrics.got[0]
	if strings.Join(o.SuspectedOrphans, ",") != "made-up,us-west" || o.RegionLabel("made-up") != OtherRegion || o.RegionLabel("us-west") != "us-west" || o.RegionLabel("eu") != "eu" {
		t.Fatalf("outcome = %+v", o)
	}
	if !res.Record.Attempts[0].SuspectedOrphan || !res.Record.Attempts[1].SuspectedOrphan || res.Record.Attempts[2].SuspectedOrphan {
		t.Fatalf("attempts = %+v", res.Record.Attempts)
	}
}

func TestRetryAfterFor(t *testing.T) {
	tests := []struct {
		name     string
		code     gameinstance.Code
		attempts []attempt
		want     time.Duration
	}{
		{"no capacity, no hint", gameinstance.CodeNoCapacity, []attempt{{}}, 5 * time.Second},
		{"no capacity, the allocator's hint", gameinstance.CodeNoCapacity, []attempt{{retryAfter: 7 * time.Second}, {retryAfter: 1500 * time.Millisecond}}, 7 * time.Second},
		{"a part second rounds up", gameinstance.CodeNoCapacity, []attempt{{retryAfter: 1500 * time.Millisecond}}, 2 * time.Second},
		{"rate-limited, no hint", gameinstance.CodeRateLimited, []attempt{{}, {}}, 2 * time.Second},
		{"rate-limited, the Allocator's hint", gameinstance.CodeRateLimited, []attempt{{retryAfter: 30 * time.Second}}, 30 * time.Second},
		{"an absurd hint is capped", gameinstance.CodeNoCapacity, []attempt{{retryAfter: 24 * time.Hour}}, time.Minute},
		{"timeout", gameinstance.CodeUpstreamTimeout, nil, 2 * time.Second},
		{"rejected: fix it first", gameinstance.CodeAllocationFailed, nil, 0},
	}
	for _, tc := range tests {
		if got := retryAfterFor(tc.code, tc.attempts); got != tc.want {
			t.Errorf("%s: Retry-After = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestBoundAttempts(t *testing.T) {
	big := strings.Repeat("x", 600)
	many := make([]gameinstance.Attempt, 40) // 10 regions, each with two 429 retries and a token refresh
	for i := range many {
		many[i] = gameinstance.Attempt{Region: "r", Error: "allocator answered 503: " + big[:256], Body: big[:512]}
	}
	tests := []struct {
		name     string
		in       []gameinstance.Attempt
		keepLast bool // the last attempt keeps its body
	}{
		{"small stays whole", []gameinstance.Attempt{{Error: "e", Body: "b"}}, true},
		{"forty attempts with full bodies", many, true},
	}
	for _, tc := range tests {
		out := boundAttempts(tc.in)
		total := 0
		for _, a := range out {
			total += len(a.Error) + len(a.Body)
		}
		if total > maxAttemptDetail || len(out) != len(tc.in) {
			t.Errorf("%s: %d attempts with %d detail bytes, want %d within %d", tc.name, len(out), total, len(tc.in), maxAttemptDetail)
		}
		if last := out[len(out)-1]; tc.keepLast && last.Body != tc.in[len(tc.in)-1].Body {
			t.Errorf("%s: the last attempt lost its body", tc.name)
		}
	}
	if many[0].Body == "" {
		t.Error("boundAttempts changed its input")
	}
}
