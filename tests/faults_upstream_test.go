//go:build integration

package tests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// upstreamFault is one row of the upstream fault matrix: what GameFabric
// (or the network in front of it) does, and what the caller, DynamoDB and
// the next call must then see.
type upstreamFault struct {
	name     string
	fallback bool           // FALLBACK_REGION=eu-central-1; otherwise us-west is the only region
	primary  []gfemu.Answer // us-west's answers to the faulty call, in order
	second   []gfemu.Answer // eu-central-1's answers
	refused  bool           // nothing listens at the allocator URL
	// prepare runs before the faulty call, recover after it (besides the
	// stand-in answering OK from then on).
	prepare, recover func(t *testing.T, e *env)

	status   int
	code     string   // "" for a success
	attempts []string // region:status of each attempt
	errHas   string   // a substring of the first attempt's error, when set
	// orphan: the first attempt may have left a server allocated upstream
	// (no answer, the gateway's 504, a 2xx broken off or unusable).
	orphan bool
	// minTime/maxTime bound the faulty call's duration, when set.
	minTime, maxTime time.Duration
	secrets          []string // besides the allocator and callback tokens, must never be shown
	check            func(t *testing.T, e *env, calls []gfemu.Call)
	nextAttempts     []string // of the next call; default us-west:200
}

const faultGameInstance = "gi-fault"

func upstreamFaults() []upstreamFault {
	ok := gfemu.Answer{}
	capacity := func(status int) upstreamFault {
		return upstreamFault{name: fmt.Sprint(status), primary: []gfemu.Answer{{Status: status, Error: "no game server available"}},
			status: 503, code: "NO_CAPACITY", attempts: []string{fmt.Sprintf("us-west:%d", status)}}
	}
	failed := func(status int) upstreamFault {
		return upstreamFault{name: fmt.Sprint(status), primary: []gfemu.Answer{{Status: status, Error: "allocator error"}},
			status: 502, code: "ALLOCATION_FAILED", attempts: []string{fmt.Sprintf("us-west:%d", status)}}
	}
	tooMany := func(n int, retryAfter string) []gfemu.Answer {
		var rs []gfemu.Answer
		for range n {
			rs = append(rs, gfemu.Answer{Status: 429, Error: "rate limit exceeded", RetryAfter: retryAfter})
		}
		return rs
	}
	return append([]upstreamFault{
		failed(400),
		{
			// GameFabric rotated its tokens; our secret was rotated to a
			// token it does not accept. The cached token gets a 401, the
			// secret is re-read once, the re-read token gets a 401 too.
			name: "401 after one token refresh",
			prepare: func(t *testing.T, e *env) {
				// A warm instance: the token is cached before the rotation.
				e.stub.Queue("us-west", gfemu.Answer{})
				e.allocate(t, `{"gameInstanceId":"gi-warm","desiredRegion":"us-west"}`).expect(t, http.StatusCreated, "")
				e.stub.SetTokens("rotated-token")
				putSecret(t, e.secret, `{"tokens":["current-token","mis-rotated-token"]}`)
			},
			recover: func(t *testing.T, e *env) {
				putSecret(t, e.secret, `{"tokens":["mis-rotated-token","rotated-token"]}`)
			},
			status: 502, code: "ALLOCATION_FAILED", attempts: []string{"us-west:401", "us-west:401"},
			secrets: []string{"rotated-token"},
			check: func(t *testing.T, e *env, calls []gfemu.Call) {
				// calls[0] is the warm-up; then one call per token.
				if len(calls) != 3 || calls[1].Token != "current-token" || calls[2].Token != "mis-rotated-token" {
					t.Fatalf("upstream calls %+v, want the cached token and then the re-read one", calls)
				}
			},
			// The next call starts with the cached bad token: one 401,
			// one re-read, one success.
			nextAttempts: []string{"us-west:401", "us-west:200"},
		},
		failed(403),
		capacity(404),
		capacity(409),
		{
			// A 429 is the Allocator's rate limit, never NO_CAPACITY.
			name: "429 with Retry-After within MaxWait is retried in region", primary: tooMany(3, "1"),
			status: 429, code: "RATE_LIMITED", attempts: []string{"us-west:429", "us-west:429", "us-west:429"},
			minTime: 2 * time.Second, // waited Retry-After twice
		},
		{
			name: "429 without Retry-After is retried with backoff", primary: tooMany(3, ""),
			status: 429, code: "RATE_LIMITED", attempts: []string{"us-west:429", "us-west:429", "us-west:429"},
			minTime: 60 * time.Millisecond, maxTime: 2 * time.Second, // 20 ms + 40 ms
		},
		{
			name: "429 with Retry-After over MaxWait gives up at once", primary: tooMany(1, "5"),
			status: 429, code: "RATE_LIMITED", attempts: []string{"us-west:429"}, maxTime: 3 * time.Second, // waiting would take 5 s
		},
		failed(500),
		failed(502),
		capacity(503),
		{
			// The allocator's gateway timed out: a timeout, not a failure.
			name: "504", primary: []gfemu.Answer{{Status: 504, Error: "gateway timeout"}},
			status: 504, code: "UPSTREAM_TIMEOUT", attempts: []string{"us-west:504"}, orphan: true,
		},
		{
			name: "connection refused", refused: true,
			status: 502, code: "ALLOCATION_FAILED", attempts: []string{"us-west:0"}, errHas: "connection refused",
		},
		{
			// "read response" proves the failure came after the 200's headers.
			name: "connection reset mid-body", primary: []gfemu.Answer{{ResetAfter: 20}},
			status: 502, code: "ALLOCATION_FAILED", attempts: []string{"us-west:0"}, errHas: "read response", orphan: true,
		},
		{
			name: "body that never finishes", primary: []gfemu.Answer{{StallAfter: 20}},
			status: 504, code: "UPSTREAM_TIMEOUT", attempts: []string{"us-west:0"}, errHas: "no answer before the attempt timeout", orphan: true,
			minTime: 300 * time.Millisecond, maxTime: 2 * time.Second,
		},
		{
			// A proxy's error page with a 200: not JSON at all.
			name: "malformed JSON", primary: []gfemu.Answer{{RawBody: "<html><body>upstream error</body></html>"}},
			status: 502, code: "ALLOCATION_FAILED", attempts: []string{"us-west:0"}, errHas: "not an allocation JSON object", orphan: true,
		},
		{
			// The documented success shape without its address; it still
			// carries the callback token, which must not reach the caller.
			name:    "200 without address",
			primary: []gfemu.Answer{{RawBody: `{"ip":"127.0.0.1","ports":{"game":7000},"token":"callback-7000","payload":{"accepted":"gi-fault"}}`}},
			status:  502, code: "ALLOCATION_FAILED", attempts: []string{"us-west:0"}, errHas: "no address", orphan: true,
		},
		{
			name: "body over 1 MiB", primary: []gfemu.Answer{{RawBody: oversizedAllocation}},
			status: 502, code: "ALLOCATION_FAILED", attempts: []string{"us-west:0"}, errHas: "exceeds", orphan: true,
		},

		// With a fallback region the same faults move on to it.
		{
			name: "500 then fallback", fallback: true, primary: []gfemu.Answer{{Status: 500, Error: "boom"}}, second: []gfemu.Answer{ok},
			status: 201, attempts: []string{"us-west:500", "eu-central-1:200"},
		},
		{
			name: "504 then fallback", fallback: true, primary: []gfemu.Answer{{Status: 504, Error: "gateway timeout"}}, second: []gfemu.Answer{ok},
			status: 201, attempts: []string{"us-west:504", "eu-central-1:200"}, orphan: true,
		},
		{
			name: "reset mid-body then fallback", fallback: true, primary: []gfemu.Answer{{ResetAfter: 20}}, second: []gfemu.Answer{ok},
			status: 201, attempts: []string{"us-west:0", "eu-central-1:200"}, errHas: "read response", orphan: true,
		},
		{
			name: "body that never finishes then fallback", fallback: true, primary: []gfemu.Answer{{StallAfter: 20}}, second: []gfemu.Answer{ok},
			status: 201, attempts: []string{"us-west:0", "eu-central-1:200"}, minTime: 300 * time.Millisecond, orphan: true,
		},
		{
			// JSON cut short, after the callback token.
			name: "malformed JSON then fallback", fallback: true, primary: []gfemu.Answer{{RawBody: `{"address":"127.0.0.1:7000","token":"callback-7000","ports":{"game":`}},
			second: []gfemu.Answer{ok},
			status: 201, attempts: []string{"us-west:0", "eu-central-1:200"}, orphan: true,
		},
		{
			// One Allocator serves both regions here, so its rate limit
			// covers the fallback too (tests/allocators_test.go has the
			// fallback to another Allocator).
			name: "429 on the only Allocator skips the fallback region", fallback: true, primary: tooMany(1, "5"), second: []gfemu.Answer{ok},
			status: 429, code: "RATE_LIMITED", attempts: []string{"us-west:429", "eu-central-1:0"}, maxTime: 3 * time.Second,
			check: func(t *testing.T, e *env, calls []gfemu.Call) {
				if len(calls) != 1 {
					t.Fatalf("upstream calls %+v, want only the rate-limited one", calls)
				}
			},
		},
	}, sizeFaults()...)
}

// TestUpstreamFaults: for each way GameFabric can fail, the caller gets the
// documented status and code with every attempt explained, DynamoDB holds
// the matching record, no credential leaks, and the next call for the same
// game instance behaves once GameFabric is well again.
func TestUpstreamFaults(t *testing.T) {
	for _, tc := range upstreamFaults() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runUpstreamFault(t, tc)
		})
	}
}

func runUpstreamFault(t *testing.T, tc upstreamFault) {
	o := envOptions{attemptTimeout: 300 * time.Millisecond}
	if tc.fallback {
		o.fallbackRegion = "eu-central-1"
	}
	var refused string
	if tc.refused {
		refused = closedPort(t)
		o.allocatorURL = "http://" + refused + "/allocator/test/allocate"
	}
	e := newEnv(t, o)
	if tc.prepare != nil {
		tc.prepare(t, e)
	}
	before := len(e.stub.Calls())
	e.stub.Queue("us-west", tc.primary...)
	e.stub.Queue("eu-central-1", tc.second...)
	body := `{"gameInstanceId":"` + faultGameInstance + `","desiredRegion":"us-west"}`

	start := time.Now()
	r := e.allocate(t, body).expect(t, tc.status, tc.code)
	took := time.Since(start)

	// Every attempt is there, and each failed one says why.
	attempts := r.attempts()
	if got := regionStatuses(attempts); strings.Join(got, ",") != strings.Join(tc.attempts, ",") {
		t.Fatalf("attempts = %v, want %v: %s", got, tc.attempts, r.Raw)
	}
	for _, a := range attempts {
		if msg, _ := a["error"].(string); a["status"] != float64(200) && msg == "" {
			t.Fatalf("failed attempt without an error: %v", a)
		}
	}
	if msg, _ := attempts[0]["error"].(string); tc.errHas != "" && !strings.Contains(msg, tc.errHas) {
		t.Fatalf("first attempt's error %q, want it to mention %q", msg, tc.errHas)
	}
	if tc.minTime > 0 && took < tc.minTime || tc.maxTime > 0 && took > tc.maxTime {
		t.Fatalf("the call took %s, want between %s and %s", took, tc.minTime, tc.maxTime)
	}
	if len(r.Raw) > maxAnswer {
		t.Fatalf("the answer is %d bytes, want at most %d", len(r.Raw), maxAnswer)
	}
	if orphan, _ := attempts[0]["suspectedOrphan"].(bool); orphan != tc.orphan {
		t.Fatalf("first attempt suspectedOrphan = %v, want %v: %s", orphan, tc.orphan, r.Raw)
	}
	if (tc.code == "NO_CAPACITY" || tc.code == "UPSTREAM_TIMEOUT" || tc.code == "RATE_LIMITED") && r.Header.Get("Retry-After") == "" {
		t.Fatalf("%s without Retry-After", tc.code)
	}

	// DynamoDB holds what the caller was told.
	item := e.rawItem(t, faultGameInstance)
	plain, stored := plainItem(t, item)
	if tc.code != "" {
		if str(item, "state") != "Failed" || str(item, "failureCode") != tc.code || num(item, "expiresAt") == "" {
			t.Fatalf("stored %s, want Failed with failureCode %s and an expiry", stored, tc.code)
		}
	} else { // the successes of this matrix are fallbacks
		if str(item, "state") != "Allocated" || str(item, "region") != "eu-central-1" || r.Body["fallbackUsed"] != true {
			t.Fatalf("stored %s (response %s), want Allocated in the fallback region", stored, r.Raw)
		}
	}
	if storedAttempts, _ := plain["attempts"].([]any); len(storedAttempts) != len(attempts) {
		t.Fatalf("stored attempts differ from the %d answered: %s", len(attempts), stored)
	}
	if size := store.ItemSize(item); size > maxAnswer {
		t.Fatalf("the record is %d bytes, want at most %d", size, maxAnswer)
	}

	calls := e.stub.Calls()
	secrets := append([]string{"old-token", "current-token", "callback-"}, tc.secrets...)
	for _, c := range calls {
		if pt, _ := c.Payload["PartnerGameToken"].(string); pt != "" {
			secrets = append(secrets, pt)
		}
	}
	for _, s := range secrets {
		if strings.Contains(r.Raw, s) || strings.Contains(stored, s) {
			t.Fatalf("%q leaked: response %s, stored %s", s, r.Raw, stored)
		}
	}
	if tc.check != nil {
		tc.check(t, e, calls)
	}

	// The next call for the same game instance, with GameFabric well again.
	e.stub.Always("us-west", gfemu.Answer{})
	if tc.refused {
		serveOn(t, refused, e.stub.Handler())
	}
	if tc.recover != nil {
		tc.recover(t, e)
	}
	n := len(e.stub.Calls())
	next := e.allocate(t, body)
	calls = e.stub.Calls()
	if tc.code == "" {
		// Allocated already: a replay, without asking GameFabric again.
		next.expect(t, http.StatusOK, "")
		if len(calls) != n || serverAddress(next) != serverAddress(r) {
			t.Fatalf("replay = %s, first = %s", next.Raw, r.Raw)
		}
	} else {
		// Failed: retried from scratch, with none of the failure left over.
		next.expect(t, http.StatusCreated, "")
		want := tc.nextAttempts
		if want == nil {
			want = []string{"us-west:200"}
		}
		if got := regionStatuses(next.attempts()); strings.Join(got, ",") != strings.Join(want, ",") || next.Body["error"] != nil {
			t.Fatalf("next call = %s, want attempts %v", next.Raw, want)
		}
		item = e.rawItem(t, faultGameInstance)
		if str(item, "state") != "Allocated" || str(item, "failureCode") != "" || num(item, "expiresAt") != "" {
			_, stored = plainItem(t, item)
			t.Fatalf("after the retry stored %s", stored)
		}
	}
	// Exactly one server was handed out for this game instance, and it is
	// the one the record holds.
	var handedOut []string
	for _, c := range calls[before:] {
		if c.Server != "" && c.Payload["GameInstanceId"] == faultGameInstance {
			handedOut = append(handedOut, c.Server)
		}
	}
	if len(handedOut) != 1 || handedOut[0] != serverAddress(next) {
		t.Fatalf("servers handed out %v, the record holds %q", handedOut, serverAddress(next))
	}
}

// The stand-in's cut answers are what the matrix claims: the client gets a
// 200 and its headers, then the body fails (reset) or never ends (stall).
func TestUpstreamFaultStubCutsBodies(t *testing.T) {
	stub := gfemu.Start("current-token")
	t.Cleanup(stub.Close)
	post := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, stub.AllocateURL(),
			strings.NewReader(`{"region":"us-west","attributes":{},"payload":{"GameInstanceId":"gi-stub"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer current-token")
		return http.DefaultClient.Do(req)
	}

	stub.Queue("us-west", gfemu.Answer{ResetAfter: 20})
	resp, err := post(context.Background())
	if err != nil || resp.StatusCode != http.StatusOK || resp.ContentLength <= 20 {
		t.Fatalf("reset: %v %+v, want a 200 announcing more than 20 bytes", err, resp)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(got) != 20 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reset: read %q, %v; want 20 bytes, then connection reset", got, err)
	}

	stub.Queue("us-west", gfemu.Answer{StallAfter: 20})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	resp, err = post(ctx)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stall: %v %+v, want a 200", err, resp)
	}
	got, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(got) != 20 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stall: read %q, %v; want 20 bytes, then nothing until the deadline", got, err)
	}

	// Neither handed out a server; both calls were recorded.
	calls := stub.Calls()
	if len(calls) != 2 || calls[0].Answered != 0 || calls[0].Server != "" || calls[1].Answered != 0 || calls[1].Server != "" {
		t.Fatalf("calls = %+v", calls)
	}
}
