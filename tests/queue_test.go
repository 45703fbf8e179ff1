//go:build integration

package tests

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Queued placements on DynamoDB Local and moto's SQS: the API answers, the
// worker (PlacementFunction's handler) runs the messages; the real
// bootstraps run the same path in TestQueuedPlacementOnTheLocalStack.

func queuedBody(id string, timeout int, extra string) string {
	return fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":"us-west","queueTimeoutSeconds":%d%s}`, id, timeout, extra)
}

func allocationsIn(stub *gfemu.Installation, region string) (calls int) {
	for _, c := range stub.Calls() {
		if c.Region == region {
			calls++
		}
	}
	return calls
}

func TestQueuedPlacementIsFulfilledWhenCapacityReturns(t *testing.T) {
	e := newEnv(t, envOptions{queue: true})
	e.stub.Always("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "buffer drained", RetryAfter: "1"})
	first := e.allocate(t, queuedBody("gi-refill", 60, ""))
	first.expect(t, http.StatusAccepted, "")
	if first.Body["state"] != "Queued" || first.Body["queuedUntil"] == nil || first.Header.Get("Location") != "/v1/allocations/gi-refill" {
		t.Fatalf("202 answer: %s (Location %q)", first.Raw, first.Header.Get("Location"))
	}
	if ra, err := strconv.Atoi(first.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", first.Header.Get("Retry-After"))
	}
	e.allocate(t, queuedBody("gi-refill", 60, "")).expect(t, http.StatusAccepted, "") // a replay while queued
	get := e.do(t, "GET", "/v1/allocations/gi-refill", "")
	if get.Status != http.StatusOK || get.Body["state"] != "Queued" || get.Header.Get("Retry-After") == "" {
		t.Fatalf("GET while queued: %d %s, Retry-After %q", get.Status, get.Raw, get.Header.Get("Retry-After"))
	}
	e.work(t, 3*time.Second, func() bool { return false }) // still dry: waits on
	if rec := e.stateOf(t, "gi-refill"); rec.State != gameinstance.StateQueued {
		t.Fatalf("still dry, the placement is %s", rec.State)
	}
	e.stub.Always("us-west", gfemu.Answer{}) // the Armada scaled up
	refilled := time.Now()
	e.work(t, 20*time.Second, func() bool { return e.stateOf(t, "gi-refill").State == gameinstance.StateAllocated })
	rec := e.stateOf(t, "gi-refill")
	if rec.State != gameinstance.StateAllocated || len(e.stub.Allocations()) != 1 {
		t.Fatalf("after refilling: %s with %d upstream allocations", rec.State, len(e.stub.Allocations()))
	}
	t.Logf("placed %s after capacity returned", time.Since(refilled).Round(100*time.Millisecond))
	e.allocate(t, queuedBody("gi-refill", 60, "")).expect(t, http.StatusOK, "") // a replay once placed
	if got := e.pending(t); got != 0 {
		t.Fatalf("%d placement messages left behind", got)
	}
}

func TestQueuedPlacementTimesOut(t *testing.T) {
	e := newEnv(t, envOptions{queue: true})
	e.stub.Always("us-west", gfemu.Answer{Status: http.StatusNotFound, Error: "no server"})
	start := time.Now()
	e.allocate(t, queuedBody("gi-dry", 4, "")).expect(t, http.StatusAccepted, "")
	e.work(t, 25*time.Second, func() bool { return e.stateOf(t, "gi-dry").State != gameinstance.StateQueued })
	rec := e.stateOf(t, "gi-dry")
	took := time.Since(start)
	if rec.State != gameinstance.StateFailed || rec.Failure.Code != gameinstance.CodePlacementTimedOut {
		t.Fatalf("never refilled: %+v", rec)
	}
	// Within the deadline plus one retry interval (the longest is 15 s;
	// this one, 4 s in, is at most 1 s) and the worker's poll.
	if limit := 4*time.Second + 15*time.Second; took > limit {
		t.Fatalf("timed out after %s, more than %s", took, limit)
	}
	get := e.do(t, "GET", "/v1/allocations/gi-dry", "")
	if get.Status != http.StatusOK || get.code() != "PLACEMENT_TIMED_OUT" {
		t.Fatalf("GET: %s", get.Raw)
	}
}

func TestDeleteCancelsAQueuedPlacement(t *testing.T) {
	e := newEnv(t, envOptions{queue: true})
	e.stub.Always("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "drained"})
	e.allocate(t, queuedBody("gi-cancel", 60, "")).expect(t, http.StatusAccepted, "")
	before := len(e.stub.Calls())
	del := e.do(t, "DELETE", "/v1/allocations/gi-cancel", "")
	if del.Status != http.StatusOK || del.Body["state"] != "Failed" || del.Body["error"].(map[string]any)["code"] != "PLACEMENT_CANCELLED" {
		t.Fatalf("DELETE: %d %s", del.Status, del.Raw)
	}
	e.stub.Always("us-west", gfemu.Answer{}) // capacity returns: nobody may use it for this instance
	if handed := e.work(t, 4*time.Second, func() bool { return e.pending(t) == 0 }); handed == 0 {
		t.Fatal("the queued message never came")
	}
	if after := len(e.stub.Calls()); after != before {
		t.Fatalf("%d upstream calls after the DELETE answered", after-before)
	}
	if again := e.do(t, "DELETE", "/v1/allocations/gi-cancel", ""); again.Status != http.StatusOK {
		t.Fatalf("a repeated DELETE: %d %s", again.Status, again.Raw)
	}
}

func TestLatencyPoliciesKeepAFarRegionUnasked(t *testing.T) {
	e := newEnv(t, envOptions{queue: true})
	e.stub.Always("near", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "drained"})
	e.stub.Always("far", gfemu.Answer{})
	body := `{"gameInstanceId":"gi-far","queueTimeoutSeconds":60,
		"playerLatencies":[{"playerId":"a","latencyMs":{"near":30,"far":140}},{"playerId":"b","latencyMs":{"near":45,"far":120}}],
		"latencyPolicies":[{"maxPlayerLatencyMs":50,"durationSeconds":3},{"maxPlayerLatencyMs":200}]}`
	start := time.Now()
	e.allocate(t, body).expect(t, http.StatusAccepted, "")
	e.work(t, 15*time.Second, func() bool { return e.stateOf(t, "gi-far").State == gameinstance.StateAllocated })
	rec := e.stateOf(t, "gi-far")
	if rec.State != gameinstance.StateAllocated || rec.Region != "far" {
		t.Fatalf("placement %s in %q", rec.State, rec.Region)
	}
	for _, c := range e.stub.Calls() {
		if c.Region == "far" && c.At.Sub(start) < 3*time.Second {
			t.Fatalf("far was asked %s after the first attempt, under the 50 ms cap", c.At.Sub(start))
		}
	}
	for _, a := range rec.Attempts {
		if want := map[string]float64{"near": 50, "far": 200}[a.Region]; a.Region == "far" && a.MaxPlayerLatencyMs != want {
			t.Fatalf("attempt %+v: cap in force %v, want %v", a, a.MaxPlayerLatencyMs, want)
		}
	}
	if rec.Attempts[0].MaxPlayerLatencyMs != 50 || allocationsIn(e.stub, "far") != 1 {
		t.Fatalf("attempts %+v", rec.Attempts)
	}
}

// The fault matrix of queued placements: each row asserts the answer, the
// record and the upstream calls.
func TestQueuedPlacementFaults(t *testing.T) {
	t.Run("bad input leaves nothing", func(t *testing.T) {
		e := newEnv(t, envOptions{queue: true})
		for _, body := range []string{
			queuedBody("gi-bad", 601, ""), queuedBody("gi-bad", -1, ""),
			queuedBody("gi-bad", 30, `,"playerLatencies":[{"playerId":"a","latencyMs":{"eu":3}}],"latencyPolicies":[{"maxPlayerLatencyMs":100,"durationSeconds":5},{"maxPlayerLatencyMs":50}]`),
			queuedBody("gi-bad", 30, `,"playerLatencies":[{"playerId":"a","latencyMs":{"eu":3}}],"latencyPolicies":[{"maxPlayerLatencyMs":50},{"maxPlayerLatencyMs":100}]`),
		} {
			e.allocate(t, body).expect(t, http.StatusBadRequest, "INVALID_REQUEST")
		}
		if len(e.stub.Calls()) != 0 || e.stateOf(t, "gi-bad").State != "" || e.pending(t) != 0 {
			t.Fatal("a refused request left something behind")
		}
	})
	t.Run("hard failures fail at once", func(t *testing.T) {
		e := newEnv(t, envOptions{queue: true})
		e.stub.Always("us-west", gfemu.Answer{Status: http.StatusForbidden, Error: "forbidden"})
		e.allocate(t, queuedBody("gi-hard", 60, "")).expect(t, http.StatusBadGateway, "ALLOCATION_FAILED")
		if rec := e.stateOf(t, "gi-hard"); rec.State != gameinstance.StateFailed || e.pending(t) != 0 || len(e.stub.Calls()) != 1 {
			t.Fatalf("record %s, %d messages, %d calls", rec.State, e.pending(t), len(e.stub.Calls()))
		}
	})
	t.Run("SQS down when the caller is answered: no 202", func(t *testing.T) {
		e := newEnv(t, envOptions{queue: true, queueEndpoint: "http://" + closedPort(t)})
		e.stub.Always("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "drained"})
		e.allocate(t, queuedBody("gi-nosqs", 60, "")).expect(t, http.StatusServiceUnavailable, "NO_CAPACITY")
		if rec := e.stateOf(t, "gi-nosqs"); rec.State != gameinstance.StateFailed || rec.Failure.Code != gameinstance.CodeNoCapacity {
			t.Fatalf("record %+v", rec)
		}
	})
	t.Run("a message delivered after the deadline asks nobody", func(t *testing.T) {
		e := newEnv(t, envOptions{queue: true})
		e.stub.Always("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "drained", RetryAfter: "3"})
		e.allocate(t, queuedBody("gi-late", 1, "")).expect(t, http.StatusServiceUnavailable, "NO_CAPACITY") // no whole delay left: fails fast
		e.allocate(t, queuedBody("gi-late2", 2, "")).expect(t, http.StatusAccepted, "")
		calls := len(e.stub.Calls())
		time.Sleep(2 * time.Second) // the message is due after the deadline
		e.work(t, 6*time.Second, func() bool { return e.stateOf(t, "gi-late2").State != gameinstance.StateQueued })
		if rec := e.stateOf(t, "gi-late2"); rec.Failure == nil || rec.Failure.Code != gameinstance.CodePlacementTimedOut || len(e.stub.Calls()) != calls {
			t.Fatalf("record %+v, %d calls after the deadline", rec, len(e.stub.Calls())-calls)
		}
	})
	t.Run("a DELETE racing the worker's successful call", func(t *testing.T) {
		e := newEnv(t, envOptions{queue: true})
		e.stub.Always("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "drained", RetryAfter: "1"})
		e.allocate(t, queuedBody("gi-race", 60, "")).expect(t, http.StatusAccepted, "")
		e.stub.Always("us-west", gfemu.Answer{Delay: 1500 * time.Millisecond}) // the worker's call is slow, and succeeds
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.work(t, 10*time.Second, func() bool { return e.stateOf(t, "gi-race").State == gameinstance.StateAllocated })
		}()
		var del response
		for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if len(e.stub.Calls()) > 1 { // the worker's call is in flight
				del = e.do(t, "DELETE", "/v1/allocations/gi-race", "")
				break
			}
		}
		wg.Wait()
		del.expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
		if rec := e.stateOf(t, "gi-race"); rec.State != gameinstance.StateAllocated || len(e.stub.Allocations()) != 1 {
			t.Fatalf("record %s, %d allocations", rec.State, len(e.stub.Allocations()))
		}
		e.do(t, "DELETE", "/v1/allocations/gi-race", "").expect(t, http.StatusOK, "") // retried: ends it
	})
	t.Run("the worker's outcome write saved, its reply lost", func(t *testing.T) {
		proxy := newReplyLoss(t, stack.ddbEndpoint)
		e := newEnv(t, envOptions{queue: true, ddbEndpoint: proxy.Endpoint()})
		e.stub.Always("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "drained", RetryAfter: "1"})
		e.allocate(t, queuedBody("gi-lost", 60, "")).expect(t, http.StatusAccepted, "")
		e.stub.Always("us-west", gfemu.Answer{})
		rule := proxy.Lose("UpdateItem", `"Allocated"`, 1)
		e.work(t, 10*time.Second, func() bool { return e.stateOf(t, "gi-lost").State == gameinstance.StateAllocated && e.pending(t) == 0 })
		if proxy.Lost(rule) != 1 || e.stateOf(t, "gi-lost").State != gameinstance.StateAllocated || len(e.stub.Allocations()) != 1 || e.pending(t) != 0 {
			t.Fatalf("lost %d replies; record %s, %d allocations, %d messages", proxy.Lost(rule), e.stateOf(t, "gi-lost").State, len(e.stub.Allocations()), e.pending(t))
		}
	})
	t.Run("a lost message: the sweep fails the placement at its deadline", func(t *testing.T) {
		e := newEnv(t, envOptions{queue: true})
		e.stub.Always("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "drained"})
		e.allocate(t, queuedBody("gi-orphaned", 2, "")).expect(t, http.StatusAccepted, "")
		if _, err := e.lifecycle.Sweep(context.Background()); err != nil || e.stateOf(t, "gi-orphaned").State != gameinstance.StateQueued {
			t.Fatalf("before the deadline the sweep moved it: %v", err)
		}
		time.Sleep(2 * time.Second) // nobody runs the message
		sum, err := e.lifecycle.Sweep(context.Background())
		rec := e.stateOf(t, "gi-orphaned")
		if err != nil || sum.PlacementsTimedOut != 1 || rec.Failure == nil || rec.Failure.Code != gameinstance.CodePlacementTimedOut {
			t.Fatalf("sweep %+v, %v; record %+v", sum, err, rec)
		}
		calls := len(e.stub.Calls())
		e.work(t, 3*time.Second, func() bool { return e.pending(t) == 0 }) // the message, late: nobody is asked
		if len(e.stub.Calls()) != calls {
			t.Fatal("a message of a timed-out placement called GameFabric")
		}
	})
}
