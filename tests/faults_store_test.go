//go:build integration

package tests

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
)

// The fault matrix for our own dependencies: Secrets Manager (moto) and
// DynamoDB (DynamoDB Local), each made unreachable through a TCP proxy that
// resets connections, as an outage or a partition would.

const faultBody = `{"gameInstanceId":"gi-f","desiredRegion":"us-west"}`

func TestSecretsManagerFaults(t *testing.T) {
	t.Run("unreachable", func(t *testing.T) {
		proxy := newFaultProxy(t, stack.smEndpoint)
		e := newEnv(t, envOptions{smEndpoint: proxy.Endpoint()})
		e.stub.Always("us-west", gfemu.Answer{})
		proxy.SetDown(true)
		r := e.allocate(t, faultBody).expect(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
		requireRetryAfter(t, r)
		requireNothingLeft(t, e, r)

		proxy.SetDown(false)
		e.allocate(t, faultBody).expect(t, http.StatusCreated, "")
		if n := len(e.stub.Allocations()); n != 1 {
			t.Fatalf("%d upstream allocations, want 1", n)
		}
	})
	t.Run("secret missing", func(t *testing.T) {
		name := unique("gamefabric/not-created-yet")
		e := newEnv(t, envOptions{secretID: name})
		e.stub.Always("us-west", gfemu.Answer{})
		r := e.allocate(t, faultBody).expect(t, http.StatusInternalServerError, "INTERNAL")
		requireNothingLeft(t, e, r)

		// The operator creates it: the next call works, nothing cached the miss.
		if _, err := stack.sm.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{
			Name: aws.String(name), SecretString: aws.String(`{"tokens":["current-token"]}`)}); err != nil {
			t.Fatal(err)
		}
		e.allocate(t, faultBody).expect(t, http.StatusCreated, "")
	})
}

func TestDynamoDBUnavailable(t *testing.T) {
	proxy := newFaultProxy(t, stack.ddbEndpoint)
	e := newEnv(t, envOptions{ddbEndpoint: proxy.Endpoint()})
	e.stub.Always("us-west", gfemu.Answer{})
	proxy.SetDown(true)

	r := e.allocate(t, faultBody).expect(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	requireRetryAfter(t, r)
	requireNothingLeft(t, e, r)
	e.do(t, http.MethodGet, "/v1/allocations/gi-f", "").expect(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	e.server(t, "link", "gi-f", "").expect(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")

	proxy.SetDown(false)
	e.allocate(t, faultBody).expect(t, http.StatusCreated, "")
	if n := len(e.stub.Allocations()); n != 1 {
		t.Fatalf("%d upstream allocations, want 1", n)
	}
}

// DynamoDB goes away after GameFabric allocated a server, so the outcome
// cannot be recorded. The claim must not stay Allocating forever, and no
// retry may allocate a second server while the first could still be alive.
func TestDynamoDBLostAfterUpstreamSuccess(t *testing.T) {
	const lease, linkTimeout = 10 * time.Second, 30 * time.Second
	// start allocates body; own is the partnerGameToken it carries, if any.
	start := func(t *testing.T, body, own string) (*env, *harness.Clock, string) {
		clk := harness.NewClock(time.Now().UTC())
		proxy := newFaultProxy(t, stack.ddbEndpoint)
		var failNext atomic.Bool
		failNext.Store(true)
		// Between us and GameFabric: the outage starts while GameFabric
		// is allocating, so the claim was written and the outcome is not.
		var stub atomic.Pointer[gfemu.Installation] // set before the first request
		cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if failNext.Swap(false) {
				proxy.SetDown(true)
			}
			target, _ := url.Parse(stub.Load().URL)
			r.URL.Path = "/" + stub.Load().AllocatePath()
			httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
		}))
		t.Cleanup(cut.Close)
		e := newEnv(t, envOptions{ddbEndpoint: proxy.Endpoint(), lease: lease, linkTimeout: linkTimeout, now: clk.Now,
			allocatorURL: cut.URL + "/allocate", fallbackRegion: "eu-central-1"})
		stub.Store(e.stub)
		// The fallback's server is the one allocated: it holds the second
		// plan step's token, not the first.
		e.stub.Queue("us-west", gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "full"})
		e.stub.Always("eu-central-1", gfemu.Answer{})

		r := e.allocate(t, body).expect(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
		if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < 1 || ra > int(lease.Seconds()) {
			t.Fatalf("Retry-After = %q, want the rest of the lease", r.Header.Get("Retry-After"))
		}
		if !strings.Contains(r.Raw, "same gameInstanceId") || strings.Contains(r.Raw, "current-token") {
			t.Fatalf("body = %s", r.Raw)
		}
		proxy.SetDown(false)
		item := e.rawItem(t, "gi-f")
		if str(item, "state") != "Allocating" || num(item, "healthDeadline") == "" || len(e.stub.Allocations()) != 1 {
			t.Fatalf("left state %q, health deadline %q after %d allocations; want an Allocating claim the sweep watches",
				str(item, "state"), num(item, "healthDeadline"), len(e.stub.Allocations()))
		}
		calls := e.stub.Calls()
		token, _ := calls[len(calls)-1].Payload["PartnerGameToken"].(string)
		if first, _ := calls[0].Payload["PartnerGameToken"].(string); len(calls) != 2 || (first == token) != (own != "") {
			t.Fatalf("upstream calls %+v, want a 503 then an allocation, each with its own minted token (or the caller's)", calls)
		}
		// Inside the lease the allocate call might still be recording.
		e.allocate(t, body).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
		e.linkAs(t, token).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
		// Past the lease the claim is in doubt: still no second server.
		clk.Set(clk.Now().Add(lease + time.Second))
		r = e.allocate(t, body).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
		if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < int((linkTimeout - 2*time.Second).Seconds()) {
			t.Fatalf("in-doubt Retry-After = %q, want about the link timeout", r.Header.Get("Retry-After"))
		}
		if n := len(e.stub.Allocations()); n != 1 {
			t.Fatalf("%d upstream allocations while in doubt, want 1", n)
		}
		return e, clk, token
	}

	t.Run("its server links back", func(t *testing.T) {
		e, _, token := start(t, faultBody, "")
		linked := e.linkAs(t, token).expect(t, http.StatusOK, "")
		if linked.Body["state"] != "Linked" {
			t.Fatalf("link = %s", linked.Raw)
		}
		r := e.allocate(t, faultBody).expect(t, http.StatusOK, "")
		server, _ := r.Body["server"].(map[string]any)
		if r.Body["state"] != "Linked" || r.Body["recoveredByLink"] != true || server["address"] != "127.0.0.1:7000" {
			t.Fatalf("retry after recovery = %s", r.Raw)
		}
		if n := len(e.stub.Allocations()); n != 1 {
			t.Fatalf("%d upstream allocations, want 1", n)
		}
		// From now on the instance answers that server's token only.
		e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-f/heartbeat", "Bearer "+token, "").expect(t, http.StatusOK, "")
		first, _ := e.stub.Calls()[0].Payload["PartnerGameToken"].(string)
		e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-f/heartbeat", "Bearer "+first, "").expect(t, http.StatusUnauthorized, "UNAUTHORIZED")
		if item := e.rawItem(t, "gi-f"); item["candidateTokenHashes"] != nil {
			t.Fatalf("candidate hashes outlived the recovery")
		}
	})

	t.Run("no server links back", func(t *testing.T) {
		e, clk, token := start(t, faultBody, "")
		clk.Set(clk.Now().Add(linkTimeout))
		sum, err := e.lifecycle.Sweep(context.Background())
		if err != nil || sum.OutcomesLost != 1 {
			t.Fatalf("sweep = %+v, %v; want one lost outcome", sum, err)
		}
		got := e.do(t, http.MethodGet, "/v1/allocations/gi-f", "").expect(t, http.StatusOK, "ALLOCATION_FAILED")
		if got.Body["state"] != "Failed" || !strings.Contains(got.Raw, lifecycle.OutcomeLostMessage[:30]) {
			t.Fatalf("swept record = %s", got.Raw)
		}
		// Only now may a retry allocate again; the first server, had it
		// come up this late, can no longer link: the new claim has a new token.
		e.allocate(t, faultBody).expect(t, http.StatusCreated, "")
		if n := len(e.stub.Allocations()); n != 2 {
			t.Fatalf("%d upstream allocations, want 2", n)
		}
		e.linkAs(t, token).expect(t, http.StatusUnauthorized, "UNAUTHORIZED")
	})

	// With a token the backend chose, a link proves nothing about which
	// server holds it: no recovery; the sweep fails the claim, and only then
	// may a retry allocate.
	t.Run("a caller's own token cannot recover it", func(t *testing.T) {
		own := strings.Repeat("backend-chosen-token-", 2)
		body := `{"gameInstanceId":"gi-f","desiredRegion":"us-west","partnerGameToken":"` + own + `"}`
		e, clk, token := start(t, body, own)
		if token != own {
			t.Fatalf("GameFabric was sent %q, want the caller's token", token)
		}
		r := e.linkAs(t, own).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
		if !strings.Contains(r.Raw, "cannot prove which server holds it") || r.Header.Get("Retry-After") == "" {
			t.Fatalf("link = %s", r.Raw)
		}
		if str(e.rawItem(t, "gi-f"), "state") != "Allocating" {
			t.Fatal("a link with the caller's token adopted the claim")
		}
		clk.Set(clk.Now().Add(linkTimeout))
		if sum, err := e.lifecycle.Sweep(context.Background()); err != nil || sum.OutcomesLost != 1 {
			t.Fatalf("sweep = %+v, %v; want one lost outcome", sum, err)
		}
		e.allocate(t, body).expect(t, http.StatusCreated, "")
	})
}

// linkAs links gi-f with a bearer token, reporting the stub's first address.
func (e *env) linkAs(t *testing.T, token string) response {
	t.Helper()
	return e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-f/link", "Bearer "+token,
		`{"address":"127.0.0.1:7000","ports":{"game":7000}}`)
}

func requireRetryAfter(t *testing.T, r response) {
	t.Helper()
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After = %q, want whole seconds >= 1", r.Header.Get("Retry-After"))
	}
}

// requireNothingLeft: no record, no upstream call, no secret in the body.
func requireNothingLeft(t *testing.T, e *env, r response) {
	t.Helper()
	if item := e.rawItem(t, "gi-f"); item != nil {
		t.Fatalf("a record was left behind: %v", item)
	}
	if n := len(e.stub.Calls()); n != 0 {
		t.Fatalf("%d upstream calls, want none", n)
	}
	for _, leak := range []string{"current-token", "127.0.0.1:", e.secret} {
		if strings.Contains(r.Raw, leak) {
			t.Fatalf("body leaks %q: %s", leak, r.Raw)
		}
	}
}
