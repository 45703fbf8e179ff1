package allocation

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// memQueue keeps what was sent; err stands in for SQS being down.
type memQueue struct {
	mu     sync.Mutex
	sent   []QueuedPlacement
	delays []time.Duration
	err    error
}

func (q *memQueue) Enqueue(_ context.Context, m QueuedPlacement, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.sent, q.delays = append(q.sent, m), append(q.delays, delay)
	return nil
}

func (q *memQueue) last(t *testing.T) QueuedPlacement {
	t.Helper()
	if len(q.sent) == 0 {
		t.Fatal("no placement message was sent")
	}
	return q.sent[len(q.sent)-1]
}

// clock is a settable Options.Now.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func queuedService(alloc Allocator) (*Service, *memStore, *memQueue, *clock) {
	svc, store := newTestService(alloc)
	q, c := &memQueue{}, &clock{now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	svc.o.Queue, svc.o.Now = q, c.Now
	return svc, store, q, c
}

func seconds(n int) *int { return &n }

func TestQueuedPlacementWaitsThenIsPlaced(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {status(503, 3*time.Second), nil}, "eu": {status(404, 0)}}}
	svc, store, q, c := queuedService(alloc)
	req := Request{GameInstanceID: "gi-q", DesiredRegion: "us-west", QueueTimeoutSeconds: seconds(60)}
	res, err := svc.Allocate(context.Background(), req)
	if err != nil || res.Record.State != gameinstance.StateQueued || res.Record.Queue == nil {
		t.Fatalf("Allocate = %+v, %v; want Queued", res.Record, err)
	}
	if want := c.now.Add(time.Minute); !res.Record.Queue.Until.Equal(want) || len(res.Record.Attempts) != 2 {
		t.Fatalf("queued until %s with %d attempts, want %s and 2", res.Record.Queue.Until, len(res.Record.Attempts), want)
	}
	m := q.last(t)
	if m.Ticket != res.Record.Queue.Ticket || q.delays[0] != 3*time.Second || m.Request.PartnerGameToken != req.PartnerGameToken {
		t.Fatalf("message %+v after %s; record ticket %q; want the Allocator's Retry-After", m, q.delays[0], res.Record.Queue.Ticket)
	}
	// A replay answers the queued record and asks nobody.
	if replay, err := svc.Allocate(context.Background(), req); err != nil || replay.Created || replay.Record.State != gameinstance.StateQueued {
		t.Fatalf("replay = %+v, %v", replay, err)
	}
	c.now = c.now.Add(3 * time.Second)
	var claimed gameinstance.Record
	svc.o.Store = claimSpy{memStore: store, claimed: &claimed}
	if err := svc.Resume(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if !claimed.HealthDeadline.Equal(res.Record.Queue.Until) {
		t.Fatalf("the worker's claim moved the health index to %s, want it kept at the deadline", claimed.HealthDeadline)
	}
	stored, _ := store.Get(context.Background(), "gi-q")
	if stored.State != gameinstance.StateAllocated || stored.Region != "us-west" || len(stored.Attempts) != 3 || stored.Queue == nil {
		t.Fatalf("after the worker: %+v", stored)
	}
	// The same message again (SQS delivers at least once): nothing happens.
	if err := svc.Resume(context.Background(), m); err != nil || len(alloc.calls) != 3 {
		t.Fatalf("redelivery: %v, calls %v", err, alloc.calls)
	}
}

func TestQueueingIsOnlyForALackOfCapacity(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string][]error
		timeout *int
		queue   error
		want    gameinstance.Code // "" = Queued
	}{
		{"no capacity waits", map[string][]error{"us-west": {status(503, 0)}, "eu": {status(409, 0)}}, seconds(30), nil, ""},
		{"rate limited waits", map[string][]error{"us-west": {status(429, time.Hour)}, "eu": {status(429, time.Hour)}}, seconds(30), nil, ""},
		{"a hard failure fails at once", map[string][]error{"us-west": {status(503, 0)}, "eu": {status(403, 0)}}, seconds(30), nil, gameinstance.CodeAllocationFailed},
		{"timeouts fail at once", map[string][]error{"us-west": {timeout}, "eu": {timeout}}, seconds(30), nil, gameinstance.CodeUpstreamTimeout},
		{"no queue timeout fails fast", map[string][]error{"us-west": {status(503, 0)}, "eu": {status(503, 0)}}, seconds(0), nil, gameinstance.CodeNoCapacity},
		{"the queue down fails fast, never 202", map[string][]error{"us-west": {status(503, 0)}, "eu": {status(503, 0)}}, seconds(30), errors.New("sqs down"), gameinstance.CodeNoCapacity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, store, q, _ := queuedService(&script{queue: tc.answers})
			q.err = tc.queue
			res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi", DesiredRegion: "us-west", QueueTimeoutSeconds: tc.timeout})
			stored, _ := store.Get(context.Background(), "gi")
			if tc.want == "" {
				if err != nil || res.Record.State != gameinstance.StateQueued || stored.State != gameinstance.StateQueued || len(q.sent) != 1 {
					t.Fatalf("got %+v, %v, stored %s, %d messages; want Queued", res.Record, err, stored.State, len(q.sent))
				}
				return
			}
			if gameinstance.CodeOf(err) != tc.want || stored.State != gameinstance.StateFailed || len(q.sent) != 0 {
				t.Fatalf("got %v, stored %s, %d messages; want %s", err, stored.State, len(q.sent), tc.want)
			}
		})
	}
}

func TestStaleAndLateMessagesAskNobody(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {status(503, 0), nil}, "eu": {status(503, 0)}}}
	svc, store, q, c := queuedService(alloc)
	if _, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi", DesiredRegion: "us-west", QueueTimeoutSeconds: seconds(10)}); err != nil {
		t.Fatal(err)
	}
	m := q.last(t)
	stale := m
	stale.Ticket = "another"
	if err := svc.Resume(context.Background(), stale); err != nil || len(alloc.calls) != 2 {
		t.Fatalf("stale ticket: %v, calls %v", err, alloc.calls)
	}
	c.now = c.now.Add(10 * time.Second)
	if err := svc.Resume(context.Background(), m); err != nil || len(alloc.calls) != 2 {
		t.Fatalf("late message: %v, calls %v", err, alloc.calls)
	}
	stored, _ := store.Get(context.Background(), "gi")
	if stored.State != gameinstance.StateFailed || stored.Failure.Code != gameinstance.CodePlacementTimedOut {
		t.Fatalf("late message left %+v", stored)
	}
}

func TestTheLastRunBeforeTheDeadlineTimesOut(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {status(503, 0), status(503, 0)}, "eu": {status(503, 0), status(503, 0)}}}
	svc, store, q, c := queuedService(alloc)
	if _, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi", DesiredRegion: "us-west", QueueTimeoutSeconds: seconds(5)}); err != nil {
		t.Fatal(err)
	}
	if d := q.delays[0]; d < minQueueDelay || d > 5*time.Second {
		t.Fatalf("delay %s", d)
	}
	c.now = c.now.Add(4500 * time.Millisecond) // less than a delay left after this run
	if err := svc.Resume(context.Background(), q.last(t)); err != nil {
		t.Fatal(err)
	}
	stored, _ := store.Get(context.Background(), "gi")
	if stored.State != gameinstance.StateFailed || stored.Failure.Code != gameinstance.CodePlacementTimedOut || len(q.sent) != 1 || len(stored.Attempts) != 4 {
		t.Fatalf("got %+v, %d messages", stored, len(q.sent))
	}
}

func TestQueueDownInTheWorkerKeepsTheMessage(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {status(503, 0), status(503, 0), nil}, "eu": {status(503, 0), status(503, 0)}}}
	svc, store, q, c := queuedService(alloc)
	if _, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi", DesiredRegion: "us-west", QueueTimeoutSeconds: seconds(60)}); err != nil {
		t.Fatal(err)
	}
	m := q.last(t)
	q.err = errors.New("sqs down")
	c.now = c.now.Add(2 * time.Second)
	if err := svc.Resume(context.Background(), m); err == nil {
		t.Fatal("the worker dropped a message it could not replace")
	}
	if stored, _ := store.Get(context.Background(), "gi"); !queuedUnder(stored, m.Ticket) {
		t.Fatalf("record %+v is not queued under the kept message", stored)
	}
	q.err = nil
	c.now = c.now.Add(time.Minute / 2)
	if err := svc.Resume(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if stored, _ := store.Get(context.Background(), "gi"); stored.State != gameinstance.StateAllocated {
		t.Fatalf("redelivered message left %s", stored.State)
	}
}

func TestLatencyPoliciesRelaxOverTime(t *testing.T) {
	alloc := &script{queue: map[string][]error{"near": {status(503, 0), status(503, 0), status(503, 0)}, "far": {nil}}}
	svc, store, q, c := queuedService(alloc)
	svc.o.Defaults.Region = "far" // the fallback is capped like any region
	req := Request{GameInstanceID: "gi", QueueTimeoutSeconds: seconds(120),
		PlayerLatencies: []PlayerLatency{{PlayerID: "a", LatencyMs: map[string]float64{"near": 40, "far": 150}}},
		LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: seconds(10)}, {MaxPlayerLatencyMs: 100, DurationSeconds: seconds(20)}, {MaxPlayerLatencyMs: 200}}}
	res, err := svc.Allocate(context.Background(), req)
	if err != nil || res.Record.State != gameinstance.StateQueued {
		t.Fatalf("%+v, %v", res.Record, err)
	}
	for _, step := range []struct {
		at   time.Duration
		want []string
	}{{5 * time.Second, []string{"near", "near"}}, {20 * time.Second, []string{"near", "near", "near"}}, {31 * time.Second, []string{"near", "near", "near", "near", "far"}}} {
		c.now = res.Record.CreatedAt.Add(step.at)
		if err := svc.Resume(context.Background(), q.last(t)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(alloc.calls, step.want) {
			t.Fatalf("at %s: calls %v, want %v", step.at, alloc.calls, step.want)
		}
	}
	stored, _ := store.Get(context.Background(), "gi")
	caps := []float64{}
	for _, a := range stored.Attempts {
		caps = append(caps, a.MaxPlayerLatencyMs)
	}
	if stored.State != gameinstance.StateAllocated || !reflect.DeepEqual(caps, []float64{50, 50, 100, 200, 200}) {
		t.Fatalf("state %s, caps in force %v", stored.State, caps)
	}
}

func TestEveryRegionOverTheCapWaits(t *testing.T) {
	alloc := &script{queue: map[string][]error{}}
	svc, _, q, _ := queuedService(alloc)
	res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi", QueueTimeoutSeconds: seconds(60),
		PlayerLatencies: []PlayerLatency{{PlayerID: "a", LatencyMs: map[string]float64{"far": 150, "eu": 120}}},
		LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: seconds(4)}, {MaxPlayerLatencyMs: 200}}})
	if err != nil || res.Record.State != gameinstance.StateQueued || len(alloc.calls) != 0 {
		t.Fatalf("%+v, %v, calls %v", res.Record, err, alloc.calls)
	}
	if q.delays[0] != 4*time.Second {
		t.Fatalf("next attempt in %s, want when the cap relaxes (4s)", q.delays[0])
	}
}

func TestQueuedNoCapacityIsNoRegionFault(t *testing.T) {
	for _, queued := range []bool{false, true} {
		alloc := &script{queue: map[string][]error{"us-west": {status(503, 0)}, "eu": {status(503, 0)}}}
		svc, _, _, _ := queuedService(alloc)
		health := &fakeHealth{}
		svc.o.Health = health
		req := Request{GameInstanceID: "gi", DesiredRegion: "us-west"}
		if queued {
			req.QueueTimeoutSeconds = seconds(30)
		}
		_, _ = svc.Allocate(context.Background(), req)
		if want := !queued; (len(health.observed) > 0) != want {
			t.Errorf("queued %v: observed %v", queued, health.observed)
		}
	}
}

func TestLatencyPolicyValidation(t *testing.T) {
	players := []PlayerLatency{{PlayerID: "a", LatencyMs: map[string]float64{"eu": 30}}}
	cap50 := 50.0
	for _, tc := range []struct {
		name string
		req  Request
		ok   bool
	}{
		{"the issue's example", Request{PlayerLatencies: players, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: seconds(10)}, {MaxPlayerLatencyMs: 100, DurationSeconds: seconds(20)}, {MaxPlayerLatencyMs: 200, DurationSeconds: nil}}}, true},
		{"a last policy with a duration", Request{PlayerLatencies: players, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: seconds(10)}, {MaxPlayerLatencyMs: 100, DurationSeconds: seconds(20)}}}, true},
		{"caps not increasing", Request{PlayerLatencies: players, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 100, DurationSeconds: seconds(10)}, {MaxPlayerLatencyMs: 100, DurationSeconds: nil}}}, false},
		{"caps decreasing", Request{PlayerLatencies: players, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 100, DurationSeconds: seconds(10)}, {MaxPlayerLatencyMs: 50, DurationSeconds: nil}}}, false},
		{"a duration missing before the last", Request{PlayerLatencies: players, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: nil}, {MaxPlayerLatencyMs: 100, DurationSeconds: nil}}}, false},
		{"more than 10", Request{PlayerLatencies: players, LatencyPolicies: func() []LatencyPolicy {
			var ps []LatencyPolicy
			for i := range 11 {
				ps = append(ps, LatencyPolicy{MaxPlayerLatencyMs: float64(10 + i), DurationSeconds: seconds(1)})
			}
			return ps
		}()}, false},
		{"no players", Request{LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: nil}}}, false},
		{"with maxPlayerLatencyMs", Request{PlayerLatencies: players, MaxPlayerLatencyMs: &cap50, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: nil}}}, false},
		{"a zero cap", Request{PlayerLatencies: players, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 0, DurationSeconds: nil}}}, false},
		{"a zero duration", Request{PlayerLatencies: players, LatencyPolicies: []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: seconds(0)}, {MaxPlayerLatencyMs: 60, DurationSeconds: nil}}}, false},
		{"a timeout over 600", Request{PlayerLatencies: players, QueueTimeoutSeconds: seconds(601)}, false},
		{"a negative timeout", Request{PlayerLatencies: players, QueueTimeoutSeconds: seconds(-1)}, false},
		{"a timeout of 600", Request{PlayerLatencies: players, QueueTimeoutSeconds: seconds(600)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.GameInstanceID = "gi"
			_, err := Defaults{defaults.Request{Region: "eu", Environment: "e", ArmadaSet: "s", MaxAttempts: defaults.MaxAllocationAttempts}}.Resolve(tc.req)
			if (err == nil) != tc.ok || (err != nil && gameinstance.CodeOf(err) != gameinstance.CodeInvalidRequest) {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestCapAt(t *testing.T) {
	ps := []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: seconds(10)}, {MaxPlayerLatencyMs: 100, DurationSeconds: seconds(20)}, {MaxPlayerLatencyMs: 200, DurationSeconds: nil}}
	capped := []LatencyPolicy{{MaxPlayerLatencyMs: 50, DurationSeconds: seconds(10)}}
	for _, tc := range []struct {
		policies  []LatencyPolicy
		elapsed   time.Duration
		cap       float64
		relaxesIn time.Duration
	}{
		{ps, 0, 50, 10 * time.Second}, {ps, 9 * time.Second, 50, time.Second}, {ps, 10 * time.Second, 100, 20 * time.Second},
		{ps, 30 * time.Second, 200, 0}, {ps, time.Hour, 200, 0}, {capped, 5 * time.Second, 50, 5 * time.Second},
		{capped, 10 * time.Second, 0, 0}, {nil, 0, 0, 0},
	} {
		if c, r := capAt(tc.policies, tc.elapsed); c != tc.cap || r != tc.relaxesIn {
			t.Errorf("capAt(%v, %s) = %v, %s; want %v, %s", tc.policies, tc.elapsed, c, r, tc.cap, tc.relaxesIn)
		}
	}
}
