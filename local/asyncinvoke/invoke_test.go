package asyncinvoke

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"
)

// fakeFunction fails its first failures invocations with an error
// document, as a Go runtime posts one, and records every event.
type fakeFunction struct {
	mu       sync.Mutex
	failures int
	events   []string
	at       []time.Time
}

func (f *fakeFunction) Invoke(_ context.Context, event []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events, f.at = append(f.events, string(event)), append(f.at, time.Now())
	if len(f.events) <= f.failures {
		return []byte(`{"errorMessage":"store down","errorType":"errorString"}`), errors.New("errorString: store down")
	}
	return []byte("null"), nil
}

func (f *fakeFunction) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.events)
}

// fakeQueue is an on-failure destination that keeps what it is sent.
type fakeQueue struct {
	mu     sync.Mutex
	bodies []string
	err    error
}

func (q *fakeQueue) Send(_ context.Context, body string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bodies = append(q.bodies, body)
	return q.err
}

func (q *fakeQueue) sent() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.bodies...)
}

const event = `{"version":"0","id":"e-1","detail-type":"GameLift Matchmaking Event","source":"aws.gamelift","detail":{"matchId":"m-1"}}`

func config(dlq Destination) Config {
	return Config{Function: "MatchmakingFunction", FunctionARN: "arn:aws:lambda:us-east-1:123456789012:function:MatchmakingFunction",
		MaximumRetryAttempts: 2, MaximumEventAge: time.Hour, RetryDelay: 10 * time.Millisecond, OnFailure: dlq}
}

func TestDeliverRetriesThenSucceeds(t *testing.T) {
	for failures, wantCalls := range map[int]int{0: 1, 1: 2, 2: 3} {
		fn, dlq := &fakeFunction{failures: failures}, &fakeQueue{}
		out := Deliver(context.Background(), config(dlq), fn, []byte(event), time.Now())
		if out.Err != nil || out.Condition != "" || out.Invocations != wantCalls || fn.calls() != wantCalls || len(dlq.sent()) != 0 {
			t.Errorf("%d failures: %+v after %d calls, %d records; want success on call %d and no record",
				failures, out, fn.calls(), len(dlq.sent()), wantCalls)
		}
		for i, e := range fn.events {
			if e != event {
				t.Errorf("%d failures: invocation %d got %s, want the event as it is", failures, i+1, e)
			}
		}
	}
}

// After 1 + MaximumRetryAttempts failed invocations, waiting longer before
// each retry, Lambda's on-failure record goes to the destination.
func TestDeliverSendsTheOnFailureRecordWhenRetriesAreExhausted(t *testing.T) {
	fn, dlq := &fakeFunction{failures: 99}, &fakeQueue{}
	var heard []Outcome
	cfg := config(dlq)
	cfg.Done = func(o Outcome) { heard = append(heard, o) }
	out := Deliver(context.Background(), cfg, fn, []byte(event), time.Now())
	if out.Invocations != 3 || fn.calls() != 3 || out.Condition != RetriesExhausted || out.Err == nil || len(heard) != 1 {
		t.Fatalf("outcome %+v after %d calls (heard %d); want 3 invocations, RetriesExhausted", out, fn.calls(), len(heard))
	}
	if first, second := fn.at[1].Sub(fn.at[0]), fn.at[2].Sub(fn.at[1]); first < 10*time.Millisecond || second < 20*time.Millisecond {
		t.Errorf("retried after %v then %v; want the delay, then twice it", first, second)
	}
	sent := dlq.sent()
	if len(sent) != 1 || sent[0] != string(out.Record) {
		t.Fatalf("destination got %q, want the record once", sent)
	}
	var rec struct {
		Version        string `json:"version"`
		Timestamp      string `json:"timestamp"`
		RequestContext struct {
			RequestID, FunctionArn, Condition string
			ApproximateInvokeCount            int
		} `json:"requestContext"`
		RequestPayload  json.RawMessage `json:"requestPayload"`
		ResponseContext struct {
			StatusCode                     int
			ExecutedVersion, FunctionError string
		} `json:"responseContext"`
		ResponsePayload map[string]string `json:"responsePayload"`
	}
	if err := json.Unmarshal([]byte(sent[0]), &rec); err != nil {
		t.Fatal(err)
	}
	rc, resp := rec.RequestContext, rec.ResponseContext
	if rec.Version != "1.0" || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(rec.Timestamp) ||
		!regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(rc.RequestID) ||
		rc.FunctionArn != cfg.FunctionARN+":$LATEST" || rc.Condition != RetriesExhausted || rc.ApproximateInvokeCount != 3 ||
		resp.StatusCode != 200 || resp.ExecutedVersion != "$LATEST" || resp.FunctionError != "Unhandled" ||
		rec.ResponsePayload["errorMessage"] != "store down" || rec.ResponsePayload["errorType"] != "errorString" {
		t.Errorf("record %s", sent[0])
	}
	if string(rec.RequestPayload) != event {
		t.Errorf("requestPayload %s, want the event", rec.RequestPayload)
	}
}

func TestDeliverWithoutRetriesOrDestination(t *testing.T) {
	fn := &fakeFunction{failures: 99}
	cfg := config(nil)
	cfg.MaximumRetryAttempts = 0
	out := Deliver(context.Background(), cfg, fn, []byte(event), time.Now())
	if out.Invocations != 1 || out.Condition != RetriesExhausted || out.Record == nil {
		t.Errorf("MaximumRetryAttempts 0 = %+v; want one invocation, then the event dropped", out)
	}
}

// An event that would be older than MaximumEventAge at its next retry is
// given up on then, as EventAgeExceeded.
func TestDeliverGivesUpOnAnOldEvent(t *testing.T) {
	fn, dlq := &fakeFunction{failures: 99}, &fakeQueue{}
	cfg := config(dlq)
	cfg.MaximumEventAge = time.Minute
	out := Deliver(context.Background(), cfg, fn, []byte(event), time.Now().Add(-time.Minute+5*time.Millisecond))
	if out.Invocations != 1 || out.Condition != EventAgeExceeded || len(dlq.sent()) != 1 {
		t.Errorf("outcome %+v, %d records; want 1 invocation, EventAgeExceeded, a record", out, len(dlq.sent()))
	}
}

// A stack that stops mid-retry neither retries nor sends a record.
func TestDeliverStopsWithItsContext(t *testing.T) {
	fn, dlq := &fakeFunction{failures: 99}, &fakeQueue{}
	cfg := config(dlq)
	cfg.RetryDelay, cfg.MaximumEventAge = time.Hour, 0
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	out := Deliver(ctx, cfg, fn, []byte(event), time.Now())
	if out.Invocations != 1 || out.Condition != "" || len(dlq.sent()) != 0 || time.Since(start) > 5*time.Second {
		t.Errorf("outcome %+v, %d records after %v; want it to stop at once", out, len(dlq.sent()), time.Since(start))
	}
}

// A function that left no error document (a timeout, a crash) gets one
// made of the invocation's error; an event that is not JSON is kept as a
// string.
func TestRecordWithoutAnErrorDocument(t *testing.T) {
	b := Record("arn:f", RetriesExhausted, 3, []byte("not json"), nil, errors.New("task timed out after 30s"), time.Unix(0, 0))
	var rec struct {
		Timestamp       string            `json:"timestamp"`
		RequestPayload  string            `json:"requestPayload"`
		ResponsePayload map[string]string `json:"responsePayload"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Timestamp != "1970-01-01T00:00:00.000Z" || rec.RequestPayload != "not json" ||
		rec.ResponsePayload["errorMessage"] != "task timed out after 30s" || rec.ResponsePayload["errorType"] != "Runtime.ExitError" {
		t.Errorf("record %s", b)
	}
}
