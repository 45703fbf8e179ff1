//go:build integration

package tests

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

// The writes whose replies the proxy loses, by what their requests say.
const (
	claimWrite     = "attribute_not_exists(gameInstanceId)" // the claim's condition
	outcomeWrite   = "claimId = :c_claim"                   // the outcome's
	lifecycleWrite = "#v = :c_seen"                         // link, end, sweep: version-conditioned
	heartbeatWrite = "partnerGameTokenHash = :hash"         // the heartbeat's one conditional write
)

// lostReply is one row of the saved-but-reply-lost matrix: DynamoDB applies
// a write and its reply never arrives, so the SDK retries it and the retry
// fails its condition against the write itself.
type lostReply struct {
	name  string
	op    string // the write's operation: PutItem, else UpdateItem
	write string // which write loses its reply
	times int    // how many of its replies in a row (the SDK tries 3 times, the outcome write 5)
	// setup brings the game instance to where the call starts, with the
	// proxy passing everything; call is the call whose write loses its reply.
	setup func(t *testing.T, e *env, clk *harness.Clock, id string)
	call  func(t *testing.T, e *env, id string) response

	status  int
	code    string
	state   string // the record left
	version string // the record's version after the call: one write, not two
	// next is the call after, with nothing lost.
	next func(t *testing.T, e *env, id string, first response)
}

func TestLostReplies(t *testing.T) {
	allocate := func(t *testing.T, e *env, id string) response {
		return e.allocate(t, `{"gameInstanceId":"`+id+`","desiredRegion":"us-west","partnerGameToken":"`+tokenFor(id)+`"}`)
	}
	replay := func(t *testing.T, e *env, id string, first response) {
		r := allocate(t, e, id).expect(t, http.StatusOK, "")
		if serverAddress(r) != serverAddress(first) || len(e.stub.Allocations()) != 1 {
			t.Fatalf("replay = %s after %d allocations, want the first call's server and no new allocation", r.Raw, len(e.stub.Allocations()))
		}
	}
	linked := func(t *testing.T, e *env, _ *harness.Clock, id string) {
		allocate(t, e, id).expect(t, http.StatusCreated, "")
		e.server(t, "link", id, "").expect(t, http.StatusOK, "")
	}
	rows := []lostReply{
		{name: "claim", op: "PutItem", write: claimWrite, times: 1, call: allocate,
			status: 201, state: "Allocated", version: "2", next: replay},
		{name: "claim, every SDK attempt", op: "PutItem", write: claimWrite, times: 3, call: allocate,
			status: 201, state: "Allocated", version: "2", next: replay},
		// A claim over a record (here a Failed one) is the update after the
		// refused put.
		{name: "claim over a Failed record", write: claimWrite, times: 1,
			setup: func(t *testing.T, e *env, _ *harness.Clock, id string) {
				e.stub.Queue("us-west", gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available"})
				allocate(t, e, id).expect(t, http.StatusServiceUnavailable, "NO_CAPACITY")
			},
			call: allocate, status: 201, state: "Allocated", version: "4", next: replay},
		{name: "outcome", op: "PutItem", write: outcomeWrite, times: 1, call: allocate,
			status: 201, state: "Allocated", version: "2", next: replay},
		{name: "outcome, every SDK attempt", op: "PutItem", write: outcomeWrite, times: 5, call: allocate,
			status: 201, state: "Allocated", version: "2", next: replay},
		{name: "failed outcome", op: "PutItem", write: outcomeWrite, times: 1,
			setup: func(t *testing.T, e *env, _ *harness.Clock, _ string) {
				e.stub.Queue("us-west", gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available"})
			},
			call: allocate, status: 503, code: "NO_CAPACITY", state: "Failed", version: "2",
			next: func(t *testing.T, e *env, id string, _ response) {
				allocate(t, e, id).expect(t, http.StatusCreated, "")
			}},
		{name: "link", write: lifecycleWrite, times: 1,
			setup: func(t *testing.T, e *env, _ *harness.Clock, id string) {
				allocate(t, e, id).expect(t, http.StatusCreated, "")
			},
			call: func(t *testing.T, e *env, id string) response {
				return e.server(t, "link", id, `{"address":"127.0.0.1:7000"}`)
			},
			status: 200, state: "Linked", version: "3",
			next: func(t *testing.T, e *env, id string, _ response) {
				e.server(t, "heartbeat", id, "").expect(t, http.StatusOK, "")
			}},
		{name: "heartbeat", write: heartbeatWrite, times: 1, setup: linked,
			call:   func(t *testing.T, e *env, id string) response { return e.server(t, "heartbeat", id, "") },
			status: 200, state: "Linked", version: "4",
			next: func(t *testing.T, e *env, id string, first response) {
				if first.Body["lastHeartbeatAt"] == nil {
					t.Fatalf("heartbeat answer %s has no lastHeartbeatAt", first.Raw)
				}
				e.server(t, "heartbeat", id, "").expect(t, http.StatusOK, "")
			}},
		{name: "end", write: lifecycleWrite, times: 1, setup: linked,
			call:   func(t *testing.T, e *env, id string) response { return e.server(t, "end", id, `{"reason":"IWON"}`) },
			status: 200, state: "Ended", version: "4",
			next: func(t *testing.T, e *env, id string, _ response) {
				r := e.server(t, "end", id, "").expect(t, http.StatusOK, "")
				if r.Body["endReason"] != "IWON" {
					t.Fatalf("second end = %s", r.Raw)
				}
			}},
		{name: "sweep marking Unhealthy", write: lifecycleWrite, times: 1,
			setup: func(t *testing.T, e *env, clk *harness.Clock, id string) {
				allocate(t, e, id).expect(t, http.StatusCreated, "")
				clk.Set(clk.Now().Add(time.Hour))
			},
			call: func(t *testing.T, e *env, id string) response {
				sum, err := e.lifecycle.Sweep(context.Background())
				if err != nil || sum.Marked != 1 || sum.LinkTimeouts != 1 {
					t.Fatalf("sweep = %+v, %v; want the instance counted as marked once", sum, err)
				}
				return e.do(t, http.MethodGet, "/v1/allocations/"+id, "")
			},
			status: 200, state: "Unhealthy", version: "3"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			proxy := newReplyLoss(t, stack.ddbEndpoint)
			clk := harness.NewClock(time.Now().UTC())
			e := newEnv(t, envOptions{ddbEndpoint: proxy.Endpoint(), now: clk.Now})
			e.stub.Always("us-west", gfemu.Answer{})
			id := unique("gi-lost")
			if row.setup != nil {
				row.setup(t, e, clk, id)
			}
			op := row.op
			if op == "" {
				op = "UpdateItem"
			}
			rule := proxy.Lose(op, row.write, row.times)
			r := row.call(t, e, id).expect(t, row.status, row.code)
			if lost := proxy.Lost(rule); lost != row.times {
				t.Fatalf("%d replies lost, want %d: the write under test was not the one called", lost, row.times)
			}
			if row.code != "" {
				if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
					t.Fatalf("%s without Retry-After", row.code)
				}
			}
			item := e.rawItem(t, id)
			if got := str(item, "state"); got != row.state || num(item, "version") != row.version {
				_, stored := plainItem(t, item)
				t.Fatalf("left %s at version %s, want %s at version %s: %s", got, num(item, "version"), row.state, row.version, stored)
			}
			if n := len(e.stub.Allocations()); n != 1 && row.code == "" {
				t.Fatalf("%d upstream allocations, want 1", n)
			}
			if row.next != nil {
				row.next(t, e, id, r)
			}
		})
	}
}
