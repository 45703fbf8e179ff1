//go:build integration

package tests

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gateway"
	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// API Gateway's 30 s: GameFabric answers nothing in time in any of three
// regions, so each attempt may take the template's ALLOCATE_ATTEMPT_TIMEOUT
// (10 s). Behind the local HTTP API, which like API Gateway gives up after
// 30 s counting the cold start, the real allocate bootstrap with the
// template's defaults answers 504 UPSTREAM_TIMEOUT with its code and
// Retry-After inside its 25 s budget, not the gateway's bare 503, and
// leaves the record Failed, not Allocating.
func TestAllocationFitsTheGateway(t *testing.T) {
	t.Parallel()
	stub := gfemu.Start("current-token")
	t.Cleanup(stub.Close)
	for _, region := range []string{"us-west", "ap-south", "eu-central-1"} {
		stub.Always(region, gfemu.Answer{Delay: 15 * time.Second})
	}
	refs := newTables(t)
	refs["PlacementQueue"] = newPlacementQueue(t)
	for k, v := range map[string]string{
		"GameFabricUrl":           stub.URL,
		"GameFabricAllocatePath":  stub.AllocatePath(),
		"AllocatorTokenSecretArn": newSecret(t, `{"tokens":["current-token"]}`),
		"BackendAddress":          "http://127.0.0.1:10100",
		"FallbackRegion":          "eu-central-1",
		"FallbackEnvironment":     "prag",
		"FallbackArmadaSet":       "sample-game-armada-set",
	} {
		refs[k] = v
	}
	fnEnv := functionEnv(t, "AllocateFunction", refs)
	pool := gateway.NewPool("AllocateFunction", 1, func(ctx context.Context) (*runtimeapi.Runtime, error) {
		return runtimeapi.Start(ctx, bootstrap(t, "allocate"), fnEnv, runtimeapi.WithFunctionName("AllocateFunction"))
	})
	t.Cleanup(func() { _ = pool.Close() })
	var routes []template.Route
	all, err := stack.template.HTTPRoutes(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range all {
		if rt.FunctionLogicalID == "AllocateFunction" {
			routes = append(routes, rt)
		}
	}
	h, err := gateway.New(routes, map[string]gateway.Invoker{"AllocateFunction": pool}, gateway.Timeouts{Function: 30 * time.Second}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(validated(t, h))
	t.Cleanup(api.Close)
	e := &env{api: api, table: refs["GameInstancesTable"]}

	start := time.Now()
	r := e.allocate(t, `{"gameInstanceId":"gi-30s","preferredRegions":["us-west","ap-south"]}`).
		expect(t, http.StatusGatewayTimeout, "UPSTREAM_TIMEOUT")
	took := time.Since(start)
	// Two attempts of 10 s, the third cut to what the budget leaves: the
	// answer comes after 20 s and well before the gateway's 30 s.
	if took < 20*time.Second || took > 25*time.Second {
		t.Fatalf("answered after %s, want between 20 s and the 25 s budget", took)
	}
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	if got := strings.Join(regionStatuses(r.attempts()), ","); got != "us-west:0,ap-south:0,eu-central-1:0" {
		t.Fatalf("attempts %s: %s", got, r.Raw)
	}
	for _, a := range r.attempts() {
		if a["suspectedOrphan"] != true {
			t.Fatalf("a timed-out attempt is not a suspected orphan: %v", a)
		}
	}
	item := e.rawItem(t, "gi-30s")
	if str(item, "state") != "Failed" || str(item, "failureCode") != "UPSTREAM_TIMEOUT" || num(item, "expiresAt") == "" {
		_, stored := plainItem(t, item)
		t.Fatalf("left %s, want Failed UPSTREAM_TIMEOUT with an expiry", stored)
	}

	// GameFabric answers again: the retry the answer asked for allocates.
	stub.Always("us-west", gfemu.Answer{})
	next := e.allocate(t, `{"gameInstanceId":"gi-30s","preferredRegions":["us-west","ap-south"]}`).expect(t, http.StatusCreated, "")
	if next.Body["region"] != "us-west" || str(e.rawItem(t, "gi-30s"), "state") != "Allocated" {
		t.Fatalf("retry = %s", next.Raw)
	}
}
