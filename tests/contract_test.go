//go:build integration

package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
)

// TestContractCoversEveryOperation drives every operation of
// docs/openapi.yaml through newEnv -- the real handlers on DynamoDB Local,
// moto and the GameFabric stand-in -- with its success and its typical
// error answers. Each exchange is validated by the contract middleware
// newEnv installs (a violation fails the test there); this test then checks
// that every one of them was validated, so the contract test demonstrably
// covers every operation whatever else runs.
func TestContractCoversEveryOperation(t *testing.T) {
	e := newEnv(t, envOptions{attemptTimeout: 300 * time.Millisecond})
	e.stub.Always("us-west", gfemu.Answer{})
	e.stub.Always("full", gfemu.Answer{Status: 503, Error: "no game server available", RetryAfter: "3"})
	e.stub.Always("limited", gfemu.Answer{Status: 429, Error: "rate limit exceeded", RetryAfter: "1"})
	e.stub.Always("broken", gfemu.Answer{Status: 500, Error: "allocator error"})
	e.stub.Always("slow", gfemu.Answer{Delay: 2 * time.Second})
	ctx := context.Background()
	alloc := func(id, region string) string {
		return fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":%q,"gameServerVersion":"prag::sample-game-armada-set",`+
			`"serverArgs":"-map=arena","partnerGameToken":%q}`, id, region, tokenFor(id))
	}
	id, ended, claimed := unique("gi-contract"), unique("gi-contract-ended"), unique("gi-contract-claimed")

	// POST /v1/allocations
	created := e.allocate(t, alloc(id, "us-west")).expect(t, 201, "")
	if created.Header.Get("Location") != "/v1/allocations/"+id {
		t.Errorf("Location = %q", created.Header.Get("Location"))
	}
	e.allocate(t, alloc(id, "us-west")).expect(t, 200, "")
	e.allocate(t, alloc(id, "full")).expect(t, 409, "IDEMPOTENCY_MISMATCH")
	e.allocate(t, `{"gameInstanceId":"gi-1","colour":"red"}`).expect(t, 400, "INVALID_REQUEST")
	e.allocate(t, alloc(unique("gi-contract"), "full")).expect(t, 503, "NO_CAPACITY")
	e.allocate(t, alloc(unique("gi-contract"), "limited")).expect(t, 429, "RATE_LIMITED")
	e.allocate(t, alloc(unique("gi-contract"), "broken")).expect(t, 502, "ALLOCATION_FAILED")
	e.allocate(t, alloc(unique("gi-contract"), "slow")).expect(t, 504, "UPSTREAM_TIMEOUT")
	now := time.Now().UTC()
	// An allocation in flight: a claim of the same request.
	if _, err := e.store.Claim(ctx, gameinstance.Record{GameInstanceID: claimed, State: gameinstance.StateAllocating, ClaimID: "c",
		Fingerprint:          gameinstance.Fingerprint{DesiredRegion: "us-west", GameServerVersion: "prag::sample-game-armada-set", ServerArgs: "-map=arena"},
		PartnerGameTokenHash: gameinstance.HashToken(tokenFor(claimed)), LeaseExpiresAt: now.Add(time.Minute),
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}, now); err != nil {
		t.Fatal(err)
	}
	e.allocate(t, alloc(claimed, "us-west")).expect(t, 409, "ALLOCATION_IN_PROGRESS")

	// The game server's routes.
	e.doAuth(t, "POST", "/v1/game-instances/"+id+"/heartbeat", "", "").expect(t, 401, "UNAUTHORIZED")
	e.server(t, "heartbeat", id, "").expect(t, 409, "INVALID_STATE")
	e.server(t, "link", id, `{"address":"nowhere"}`).expect(t, 400, "INVALID_REQUEST")
	e.server(t, "link", claimed, "").expect(t, 409, "ALLOCATION_IN_PROGRESS")
	e.server(t, "link", id, `{"address":"127.0.0.1:7777","ports":{"game":7777},"serverName":"contract-1"}`).expect(t, 200, "")
	e.server(t, "heartbeat", id, "").expect(t, 200, "")
	e.allocate(t, alloc(ended, "us-west")).expect(t, 201, "")
	e.server(t, "end", ended, `{"reason":"IWON"}`).expect(t, 200, "")
	e.server(t, "end", ended, "").expect(t, 200, "")
	e.server(t, "link", ended, "").expect(t, 409, "INVALID_STATE")
	e.doAuth(t, "POST", "/v1/game-instances/"+ended+"/end", "Bearer "+tokenFor(id), "").expect(t, 401, "UNAUTHORIZED")

	// GET and DELETE /v1/allocations/{gameInstanceId}
	e.do(t, "GET", "/v1/allocations/"+id, "").expect(t, 200, "")
	e.do(t, "GET", "/v1/allocations/"+unique("gi-unknown"), "").expect(t, 404, "NOT_FOUND")
	e.do(t, "GET", "/v1/allocations/bad%20id", "").expect(t, 400, "INVALID_REQUEST")
	e.do(t, "DELETE", "/v1/allocations/"+claimed, "").expect(t, 409, "ALLOCATION_IN_PROGRESS")
	e.do(t, "DELETE", "/v1/allocations/"+id, "").expect(t, 200, "")
	e.do(t, "DELETE", "/v1/allocations/"+id, "").expect(t, 200, "")
	e.do(t, "DELETE", "/v1/allocations/"+unique("gi-unknown"), "").expect(t, 404, "NOT_FOUND")
	e.server(t, "heartbeat", id, "").expect(t, 200, "") // Ended: the server hears it should stop

	// GET /v1/regions, and its 304.
	if _, err := e.pings.Replace(ctx, []pingcache.Entry{{Region: "us-west", Zone: "US_WEST", RefreshedAt: now, ExpiresAt: now.Add(time.Hour),
		Targets: []gamefabric.PingTarget{{Address: "127.0.0.10", Port: 7600, Protocol: "udp"}}}}); err != nil {
		t.Fatal(err)
	}
	status, etag := e.regions(t, "")
	if status != 200 || etag == "" {
		t.Fatalf("GET /v1/regions = %d, ETag %q", status, etag)
	}
	if status, _ := e.regions(t, etag); status != 304 {
		t.Errorf("GET /v1/regions with If-None-Match = %d, want 304", status)
	}

	// Routes the document does not have.
	e.do(t, "GET", "/v1/nothing", "").expect(t, 404, "NOT_FOUND")
	e.do(t, "PUT", "/v1/allocations", "").expect(t, 405, "METHOD_NOT_ALLOWED")

	want := map[Exchange]bool{}
	for _, x := range []struct {
		op       string
		statuses []int
	}{
		{"allocate", []int{200, 201, 400, 409, 429, 502, 503, 504}},
		{"getAllocation", []int{200, 400, 404}},
		{"endAllocation", []int{200, 404, 409}},
		{"listRegions", []int{200, 304}},
		{"linkGameServer", []int{200, 400, 409}},
		{"heartbeat", []int{200, 401, 409}},
		{"endGame", []int{200, 401}},
		{"", []int{404, 405}},
	} {
		for _, s := range x.statuses {
			want[Exchange{Operation: x.op, Status: s}] = true
		}
	}
	counts := contractDocument(t).Counts()
	for _, op := range contractDocument(t).Operations() {
		if !want[Exchange{Operation: op.ID, Status: 200}] {
			t.Errorf("operation %s (%s %s) is not exercised here", op.ID, op.Method, op.Path)
		}
	}
	var missing []string
	for x := range want {
		if counts[x] == 0 {
			missing = append(missing, fmt.Sprintf("%s %d", x.Operation, x.Status))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("exchanges never validated against the contract: %s", strings.Join(missing, ", "))
	}
	t.Logf("validated exchanges so far (operation status: count): %v", counts)
}

// regions asks GET /v1/regions (with If-None-Match when etag is set) and
// returns the status and the ETag; a 304 has no body for doAuth to decode.
func (e *env) regions(t *testing.T, etag string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.api.URL+"/v1/regions", nil)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag")
}
