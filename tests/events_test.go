//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/player"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/streams"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// The lifecycle events, end to end: the real bootstraps write records to
// DynamoDB Local, its stream is polled like Lambda's event source mapping,
// the real EventsFunction puts events on moto's EventBridge bus, and a rule
// delivers them to an SQS queue (the stack's tap) that this test reads.
func TestEventsEndToEnd(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	// Two game servers in us-west, none in eu-central-1: allocating there
	// falls back to us-west.
	cfg.Fleet.Stagger = 100 * time.Millisecond
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": {{Command: localstack.SampleServer, ConcurrentExecutions: 2,
		Env: sampleServerEnv("2m", "ALLOC_PRIORITY=5")}}}
	for k, v := range map[string]string{"FallbackRegion": "us-west", "LinkTimeout": "3s", "HealthPeriod": "2s",
		"HealthFailureThreshold": "2", "HealthInitialDelay": "0s", "EventsMaxRetryAttempts": "1"} {
		cfg.Parameters[k] = v
	}
	s, logs := startLocalStack(t, cfg, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	us := s.Allocators[0]
	backend := backendClient(t, s)
	bus := &eventLog{s: s}
	testkit.WaitFor(t, 30*time.Second, "two us-west game servers registered", func() bool {
		return len(registeredAt(us, "dev-us-west")) == 2
	})
	state := func(id string) string {
		a, err := backend.Get(ctx, id)
		if err != nil {
			return ""
		}
		return string(a.State)
	}
	allocate := func(id, region string) *allocclient.Allocation {
		t.Helper()
		status, a, err := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: id, DesiredRegion: region})
		if status != http.StatusCreated || a.Server == nil {
			t.Fatalf("allocate %s: %d %+v %v", id, status, a, err)
		}
		return a
	}

	// allocate → link → end.
	first := allocate("gi-ev-1", "us-west")
	testkit.WaitFor(t, 15*time.Second, "gi-ev-1 Linked", func() bool { return state("gi-ev-1") == "Linked" })
	endGame(t, first.Server.Address)
	testkit.WaitFor(t, 15*time.Second, "gi-ev-1 Ended", func() bool { return state("gi-ev-1") == "Ended" })
	got := bus.await(t, "gi-ev-1", 3)
	wantSequence(t, got, "GameServerAllocated Allocating→Allocated", "GameServerLinked Allocated→Linked", "GameInstanceEnded Linked→Ended")
	if d := got[0].detail; d["region"] != "us-west" || d["fallbackUsed"] != false || d["server"].(map[string]any)["address"] != first.Server.Address {
		t.Errorf("GameServerAllocated detail = %v", d)
	}
	if d := got[2].detail; d["endReason"] != "IWON" || d["endedAt"] == nil {
		t.Errorf("GameInstanceEnded detail = %v", d)
	}

	// A fallback: eu-central-1 has no game server (its Allocator answers
	// 404), us-west has.
	second := allocate("gi-ev-2", "eu-central-1")
	testkit.WaitFor(t, 15*time.Second, "gi-ev-2 Linked", func() bool { return state("gi-ev-2") == "Linked" })
	if ended, err := backend.End(ctx, "gi-ev-2"); err != nil || ended.State != allocclient.StateEnded || ended.EndReason != "EndedByBackend" {
		t.Fatalf("DELETE gi-ev-2: %+v %v", ended, err)
	}
	got = bus.await(t, "gi-ev-2", 3)
	wantSequence(t, got, "GameServerAllocated Allocating→Allocated", "GameServerLinked Allocated→Linked", "GameInstanceEnded Linked→Ended")
	d := got[0].detail
	if d["region"] != "us-west" || d["fallbackUsed"] != true || d["desiredRegion"] != "eu-central-1" || !slices.Equal(attemptsOf(d), attemptTrace(second)) ||
		!slices.Equal(attemptsOf(d), []string{"eu-central-1:404", "us-west:200"}) {
		t.Errorf("fallback GameServerAllocated detail = %v; the allocation answered attempts %v", d, attemptTrace(second))
	}

	// A server that takes its allocation and never links (registered with
	// the us Allocator ahead of the sample servers by priority).
	silent := fakeServer(t, us, "dev-us-west", "dev-us-registry-token")
	allocate("gi-ev-3", "us-west")
	silent.await(t, "gi-ev-3")
	time.Sleep(3 * time.Second) // LinkTimeout
	sweepUntil(t, s, func() bool { return state("gi-ev-3") == "Unhealthy" })
	got = bus.await(t, "gi-ev-3", 2)
	wantSequence(t, got, "GameServerAllocated Allocating→Allocated", "GameInstanceUnhealthy Allocated→Unhealthy")
	if got[1].detail["unhealthyReason"] != "LinkTimeout" {
		t.Errorf("link timeout detail = %v", got[1].detail)
	}

	// A server that links (where game servers link back) and never heartbeats.
	mute := fakeServer(t, us, "dev-us-west", "dev-us-registry-token")
	allocate("gi-ev-4", "us-west")
	token := mute.await(t, "gi-ev-4")
	if status, doc := httpJSON(t, http.MethodPost, s.GameServerURL+"/v1/game-instances/gi-ev-4/link", token, `{"serverName":"mute"}`); status != http.StatusOK {
		t.Fatalf("link gi-ev-4: %d %v", status, doc)
	}
	time.Sleep(4 * time.Second) // HealthPeriod × HealthFailureThreshold
	sweepUntil(t, s, func() bool { return state("gi-ev-4") == "Unhealthy" })
	got = bus.await(t, "gi-ev-4", 3)
	wantSequence(t, got, "GameServerAllocated Allocating→Allocated", "GameServerLinked Allocated→Linked", "GameInstanceUnhealthy Linked→Unhealthy")
	if got[2].detail["unhealthyReason"] != "MissedHeartbeats" {
		t.Errorf("missed heartbeats detail = %v", got[2].detail)
	}
	if !bus.sawRegion("us-west", "Deployed") {
		t.Errorf("no RegionHealthChanged to Deployed for us-west; events: %v", bus.all())
	}

	// Redelivery: Lambda may hand the function a batch again. The same
	// stream records give the same idempotency keys.
	before := keysOf(bus.of("gi-ev-1"))
	replay := streamBatch(t, s, "GameInstancesTable", "gi-ev-1")
	if out, err := s.Invoke(ctx, "EventsFunction", replay); err != nil || strings.Contains(string(out), "itemIdentifier") {
		t.Fatalf("redelivered batch: %s %v", out, err)
	}
	// Each key twice: the first delivery's and the redelivery's.
	twice := slices.Sorted(slices.Values(append(slices.Clone(before), before...)))
	if all := keysOf(bus.await(t, "gi-ev-1", 6)); !slices.Equal(all, twice) {
		t.Errorf("keys after redelivery %v, want the first delivery's %v twice", all, before)
	}

	// A publish that keeps failing: with the bus gone, the record is
	// handed back, retried (EventsMaxRetryAttempts 1) and then described in
	// EventsDLQ, never dropped silently.
	if _, err := s.EventBridge().DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: aws.String(s.EventBuses["GameServerEventBus"])}); err != nil {
		t.Fatal(err)
	}
	allocate("gi-ev-5", "us-west")
	var dead []streams.FailureRecord
	testkit.WaitFor(t, 30*time.Second, "a failure record in EventsDLQ", func() bool {
		bodies, err := s.ReadQueue(ctx, "EventsDLQ", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bodies {
			var f streams.FailureRecord
			if err := json.Unmarshal([]byte(b), &f); err != nil {
				t.Fatalf("EventsDLQ message %q: %v", b, err)
			}
			dead = append(dead, f)
		}
		return len(dead) > 0
	})
	f := dead[0]
	if f.RequestContext.Condition != "RetryAttemptsExhausted" || f.RequestContext.ApproximateInvokeCount != 2 ||
		f.DDBStreamBatchInfo.StreamArn != s.Streams["GameInstancesTable"] || f.DDBStreamBatchInfo.StartSequenceNumber == "" {
		t.Errorf("failure record = %+v", f)
	}
	if n := strings.Count(logs.String(), "events not put on the bus"); n < 2 {
		t.Errorf("the failing publish was tried %d times, want the first invocation and its retry", n)
	}
	if evs := bus.of("gi-ev-5"); len(evs) != 0 {
		t.Errorf("events for gi-ev-5 arrived without a bus: %v", evs)
	}
}

// published is one event read from the tap.
type published struct {
	typ    string
	detail map[string]any
	raw    string
}

// eventLog reads the stack's tap queue and keeps every event, by subject.
type eventLog struct {
	s      *localstack.Stack
	mu     sync.Mutex
	events []published
}

func (l *eventLog) read(t *testing.T) {
	got, err := l.s.ReadTap(context.Background(), 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range got {
		var d map[string]any
		if err := json.Unmarshal(p.Detail, &d); err != nil {
			t.Fatalf("event detail %s: %v", p.Detail, err)
		}
		if p.Source != "gamefabric.allocation" {
			t.Errorf("event source %q", p.Source)
		}
		for _, secret := range []string{"partnerGameTokenHash", "candidateTokenHashes", "claimId", "PartnerGameToken"} {
			if strings.Contains(p.Raw, secret) {
				t.Errorf("event carries %s: %s", secret, p.Raw)
			}
		}
		l.events = append(l.events, published{typ: p.DetailType, detail: d, raw: p.Raw})
	}
}

func (l *eventLog) of(id string) []published {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []published
	for _, e := range l.events {
		if e.detail["gameInstanceId"] == id {
			out = append(out, e)
		}
	}
	return out
}

func (l *eventLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		out = append(out, e.typ+" "+fmt.Sprint(e.detail["idempotencyKey"]))
	}
	return out
}

func (l *eventLog) sawRegion(region, state string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.typ == "RegionHealthChanged" && e.detail["region"] == region && e.detail["state"] == state {
			return true
		}
	}
	return false
}

// await waits for n events of game instance id, then a little longer to
// see that no more come, and returns them in version order.
func (l *eventLog) await(t *testing.T, id string, n int) []published {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("%d events for %s", n, id), func() bool {
		l.read(t)
		return len(l.of(id)) >= n
	})
	l.read(t)
	got := l.of(id)
	if len(got) != n {
		t.Fatalf("%d events for %s, want %d: %v", len(got), id, n, l.all())
	}
	// EventBridge does not order deliveries; version does.
	slices.SortStableFunc(got, func(a, b published) int {
		return int(a.detail["version"].(float64) - b.detail["version"].(float64))
	})
	return got
}

// wantSequence compares "detail-type previous→state" of each event and
// checks each key is the instance, version and type.
func wantSequence(t *testing.T, got []published, want ...string) {
	t.Helper()
	var seq []string
	for _, e := range got {
		d := e.detail
		seq = append(seq, fmt.Sprintf("%s %v→%v", e.typ, d["previousState"], d["state"]))
		if key := fmt.Sprintf("%v:%v:%s", d["gameInstanceId"], d["version"], e.typ); d["idempotencyKey"] != key {
			t.Errorf("idempotencyKey %v, want %s", d["idempotencyKey"], key)
		}
		if _, ok := d["attempts"].([]any); !ok {
			t.Errorf("%s without the decision trace: %v", e.typ, d)
		}
	}
	if !slices.Equal(seq, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
}

func keysOf(evs []published) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.detail["idempotencyKey"].(string))
	}
	slices.Sort(out)
	return out
}

// endGame sends the player's IWON to a sample server's game port, as a
// player would (local/player: a server that has just linked may say NOT
// READY for a moment).
func endGame(t *testing.T, address string) {
	t.Helper()
	if _, err := player.SendIWONFor(context.Background(), address, ""); err != nil {
		t.Fatal(err)
	}
}

// fake is a game server registered by hand: it takes its allocation
// callback and does whatever the test does, nothing more.
type fake struct {
	payloads chan map[string]string
}

func fakeServer(t *testing.T, a *localstack.Allocator, regionString, registryToken string) *fake {
	t.Helper()
	f := &fake{payloads: make(chan map[string]string, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]string
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&p)
		select {
		case f.payloads <- p:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	status, doc := httpJSON(t, http.MethodPost, a.RegistryURL(), registryToken, fmt.Sprintf(
		`{"address":%q,"region":%q,"priority":0,"attributes":{"env":"prag","armadaset":"sample-game-armada-set"},"callback":{"token":"cb","url":"%s/allocate"},"ports":{"game":1}}`,
		addr, regionString, srv.URL))
	if status/100 != 2 {
		t.Fatalf("register the fake server: %d %v", status, doc)
	}
	return f
}

// await returns the PartnerGameToken of the allocation id.
func (f *fake) await(t *testing.T, id string) string {
	t.Helper()
	select {
	case p := <-f.payloads:
		if p["GameInstanceId"] != id {
			t.Fatalf("the fake server got %s, want %s", p["GameInstanceId"], id)
		}
		return p["PartnerGameToken"]
	case <-time.After(10 * time.Second):
		t.Fatalf("no allocation callback for %s", id)
	}
	return ""
}

// sweepUntil runs the health sweep until done holds.
func sweepUntil(t *testing.T, s *localstack.Stack, done func() bool) {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, "the health sweep's verdict", func() bool {
		if _, err := s.InvokeScheduled(context.Background(), "HealthSweepFunction"); err != nil {
			t.Fatal(err)
		}
		return done()
	})
}

// streamBatch is the Lambda event of every record of table's stream about
// game instance id, as the event source mapping would deliver them again.
func streamBatch(t *testing.T, s *localstack.Stack, table, id string) []byte {
	t.Helper()
	records, err := streams.ReadAll(context.Background(), s.DynamoDBStreams(), s.Streams[table], harness.Region, "gameInstanceId",
		func(key string) bool { return key == id })
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(streams.Event{Records: records})
	return b
}
