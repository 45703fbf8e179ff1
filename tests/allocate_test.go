//go:build integration

package tests

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
)

func TestAllocateReplayAndGet(t *testing.T) {
	e := newEnv(t, envOptions{fallbackRegion: "eu-central-1"})
	e.stub.Always("us-west", gfemu.Answer{})
	body := `{"gameInstanceId":"gi-1","desiredRegion":" US-West ","gameServerVersion":"prag::sample-game-armada-set","serverArgs":"-map=arena","partnerSocialToken":"social-token-value"}`

	first := e.allocate(t, body).expect(t, http.StatusCreated, "")
	server, _ := first.Body["server"].(map[string]any)
	if first.Body["state"] != "Allocated" || first.Body["region"] != "us-west" || first.Body["fallbackUsed"] != false || server["address"] == "" {
		t.Fatalf("first = %s", first.Raw)
	}
	if first.Header.Get("Location") != "/v1/allocations/gi-1" {
		t.Fatalf("Location = %q", first.Header.Get("Location"))
	}

	// What GameFabric received: the documented request shape.
	calls := e.stub.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d upstream calls, want 1", len(calls))
	}
	c := calls[0]
	minted, _ := c.Payload["PartnerGameToken"].(string)
	if c.Region != "us-west" || c.Attributes["env"] != "prag" || c.Attributes["armadaset"] != "sample-game-armada-set" ||
		c.Payload["GameInstanceId"] != "gi-1" || c.Payload["pragmaBackendAddress"] != "http://127.0.0.1:10100" ||
		c.Payload["ServerArgs"] != "-map=arena" || c.Payload["PartnerSocialToken"] != "social-token-value" || len(minted) < 43 {
		t.Fatalf("upstream saw %+v", c)
	}

	// Only the token's hash is stored, and no token leaves in a response.
	item := e.rawItem(t, "gi-1")
	if str(item, "partnerGameTokenHash") != gameinstance.HashToken(minted) {
		t.Fatalf("stored hash %q is not the minted token's", str(item, "partnerGameTokenHash"))
	}
	for _, v := range []string{first.Raw} {
		if strings.Contains(v, minted) || strings.Contains(v, "current-token") || strings.Contains(v, "callback-") {
			t.Fatalf("a token leaked: %s", v)
		}
	}

	replay := e.allocate(t, body).expect(t, http.StatusOK, "")
	if replay.Body["server"].(map[string]any)["address"] != server["address"] || len(e.stub.Calls()) != 1 {
		t.Fatalf("replay = %s after %d calls", replay.Raw, len(e.stub.Calls()))
	}
	got := e.do(t, http.MethodGet, "/v1/allocations/gi-1", "").expect(t, http.StatusOK, "")
	if got.Body["state"] != "Allocated" || got.Body["createdAt"] == nil || got.Body["updatedAt"] == nil {
		t.Fatalf("get = %s", got.Raw)
	}

	mismatch := strings.Replace(body, "-map=arena", "-map=forest", 1)
	e.allocate(t, mismatch).expect(t, http.StatusConflict, "IDEMPOTENCY_MISMATCH")
	e.do(t, http.MethodGet, "/v1/allocations/gi-unknown", "").expect(t, http.StatusNotFound, "NOT_FOUND")
	if len(e.stub.Calls()) != 1 {
		t.Fatalf("%d upstream calls after replays, want 1", len(e.stub.Calls()))
	}
}

func TestAllocateUpstreamOutcomes(t *testing.T) {
	ok := gfemu.Answer{}
	tests := []struct {
		name         string
		primary      []gfemu.Answer
		fallback     []gfemu.Answer
		wantStatus   int
		wantCode     string
		wantRegion   string
		wantAttempts []string // region:status of each attempt
	}{
		{name: "primary succeeds", primary: []gfemu.Answer{ok},
			wantStatus: 201, wantRegion: "us-west", wantAttempts: []string{"us-west:200"}},
		{name: "503 falls back", primary: []gfemu.Answer{{Status: 503, Error: "no servers"}}, fallback: []gfemu.Answer{ok},
			wantStatus: 201, wantRegion: "eu-central-1", wantAttempts: []string{"us-west:503", "eu-central-1:200"}},
		{name: "429 with Retry-After retried in region", primary: []gfemu.Answer{{Status: 429, RetryAfter: "1"}, ok},
			wantStatus: 201, wantRegion: "us-west", wantAttempts: []string{"us-west:429", "us-west:200"}},
		{name: "429 exhausted skips the same Allocator's fallback", primary: []gfemu.Answer{{Status: 429}, {Status: 429}, {Status: 429}}, fallback: []gfemu.Answer{ok},
			wantStatus: 429, wantCode: "RATE_LIMITED", wantAttempts: []string{"us-west:429", "us-west:429", "us-west:429", "eu-central-1:0"}},
		{name: "slow primary times out, fallback succeeds", primary: []gfemu.Answer{{Delay: 2 * time.Second}}, fallback: []gfemu.Answer{ok},
			wantStatus: 201, wantRegion: "eu-central-1", wantAttempts: []string{"us-west:0", "eu-central-1:200"}},
		{name: "200 without address falls back", primary: []gfemu.Answer{{RawBody: `{"ip":"127.0.0.1"}`}}, fallback: []gfemu.Answer{ok},
			wantStatus: 201, wantRegion: "eu-central-1", wantAttempts: []string{"us-west:0", "eu-central-1:200"}},
		{name: "no capacity anywhere", primary: []gfemu.Answer{{Status: 404}}, fallback: []gfemu.Answer{{Status: 409}},
			wantStatus: 503, wantCode: "NO_CAPACITY", wantAttempts: []string{"us-west:404", "eu-central-1:409"}},
		{name: "timeouts everywhere", primary: []gfemu.Answer{{Delay: 2 * time.Second}}, fallback: []gfemu.Answer{{Delay: 2 * time.Second}},
			wantStatus: 504, wantCode: "UPSTREAM_TIMEOUT", wantAttempts: []string{"us-west:0", "eu-central-1:0"}},
		{name: "errors and malformed bodies", primary: []gfemu.Answer{{Status: 500, Error: "boom"}}, fallback: []gfemu.Answer{{RawBody: `{"address":`}},
			wantStatus: 502, wantCode: "ALLOCATION_FAILED", wantAttempts: []string{"us-west:500", "eu-central-1:0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{fallbackRegion: "eu-central-1", attemptTimeout: 300 * time.Millisecond})
			e.stub.Queue("us-west", tc.primary...)
			e.stub.Queue("eu-central-1", tc.fallback...)
			r := e.allocate(t, `{"gameInstanceId":"gi-outcome","desiredRegion":"us-west"}`).expect(t, tc.wantStatus, tc.wantCode)
			var got []string
			for _, a := range r.attempts() {
				got = append(got, a["region"].(string)+":"+itoa(a["status"]))
			}
			if strings.Join(got, ",") != strings.Join(tc.wantAttempts, ",") {
				t.Fatalf("attempts = %v, want %v (%s)", got, tc.wantAttempts, r.Raw)
			}
			want := "Allocated"
			if tc.wantCode != "" {
				want = "Failed"
			} else if r.Body["region"] != tc.wantRegion || r.Body["fallbackUsed"] != (tc.wantRegion != "us-west") {
				t.Fatalf("region/fallback = %v/%v, want %s", r.Body["region"], r.Body["fallbackUsed"], tc.wantRegion)
			}
			if s := str(e.rawItem(t, "gi-outcome"), "state"); s != want {
				t.Fatalf("stored state %q, want %q", s, want)
			}
		})
	}
}

func itoa(v any) string {
	f, _ := v.(float64)
	return strings.TrimSuffix(strings.TrimSuffix(time.Duration(f).String(), "ns"), "s")
}

func TestFailedAllocationMayBeRetried(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.stub.Queue("us-west", gfemu.Answer{Status: 503, Error: "full"})
	body := `{"gameInstanceId":"gi-retry","desiredRegion":"us-west"}`
	e.allocate(t, body).expect(t, http.StatusServiceUnavailable, "NO_CAPACITY")
	// The record shows why it failed, under the same error shape.
	got := e.do(t, http.MethodGet, "/v1/allocations/gi-retry", "").expect(t, http.StatusOK, "NO_CAPACITY")
	if got.Body["state"] != "Failed" {
		t.Fatalf("failed record = %s", got.Raw)
	}
	e.stub.Queue("us-west", gfemu.Answer{})
	r := e.allocate(t, body).expect(t, http.StatusCreated, "")
	if len(r.attempts()) != 1 || r.Body["error"] != nil {
		t.Fatalf("retry kept stale failure data: %s", r.Raw)
	}
}

func TestTokenRotationRefreshesOnce(t *testing.T) {
	e := newEnv(t, envOptions{secretValue: `{"tokens":["t1","t2"]}`, validTokens: []string{"t2"}})
	e.stub.Always("us-west", gfemu.Answer{})
	e.allocate(t, `{"gameInstanceId":"gi-a","desiredRegion":"us-west"}`).expect(t, http.StatusCreated, "")

	// GameFabric rotates to t3 and the secret follows; our cached t2 gets a
	// 401, the secret is re-read once and the attempt retried.
	putSecret(t, e.secret, `{"tokens":["t2","t3"]}`)
	e.stub.SetTokens("t3")
	r := e.allocate(t, `{"gameInstanceId":"gi-b","desiredRegion":"us-west"}`).expect(t, http.StatusCreated, "")
	if a := r.attempts(); len(a) != 2 || a[0]["status"] != float64(401) {
		t.Fatalf("attempts = %v, want a 401 then a success", a)
	}
	// A token that stays wrong fails after one refresh, without leaking it.
	e.stub.SetTokens("t9")
	r = e.allocate(t, `{"gameInstanceId":"gi-c","desiredRegion":"us-west"}`).expect(t, http.StatusBadGateway, "ALLOCATION_FAILED")
	if len(r.attempts()) != 2 || strings.Contains(r.Raw, "t3") {
		t.Fatalf("want two 401 attempts and no token: %s", r.Raw)
	}
}

func TestSecretProblemsLeaveNoRecord(t *testing.T) {
	e := newEnv(t, envOptions{secretValue: `{"password":"hunter2"}`})
	r := e.allocate(t, `{"gameInstanceId":"gi-s","desiredRegion":"us-west"}`).expect(t, http.StatusInternalServerError, "INTERNAL")
	if strings.Contains(r.Raw, "hunter2") || strings.Contains(r.Raw, e.secret) {
		t.Fatalf("error body leaks secret details: %s", r.Raw)
	}
	if item := e.rawItem(t, "gi-s"); item != nil {
		t.Fatalf("a record was left behind: %v", item)
	}
}

func TestClaimInFlightAndExpiredLease(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.stub.Always("us-west", gfemu.Answer{})
	ctx := context.Background()
	claim := func(id string, lease time.Duration) {
		now := time.Now()
		rec := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocating, ClaimID: "dead-lambda",
			Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west"}, LeaseExpiresAt: now.Add(lease),
			CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if _, err := e.store.Claim(ctx, rec, now); err != nil {
			t.Fatal(err)
		}
	}
	claim("gi-live", 30*time.Second)
	r := e.allocate(t, `{"gameInstanceId":"gi-live","desiredRegion":"us-west"}`).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After = %q", ra)
	}
	// Lease expired, but a server it allocated could still link back: in doubt.
	claim("gi-doubt", -time.Second)
	r = e.allocate(t, `{"gameInstanceId":"gi-doubt","desiredRegion":"us-west"}`).expect(t, http.StatusConflict, "ALLOCATION_IN_PROGRESS")
	if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < 100 || ra > 120 {
		t.Fatalf("in-doubt Retry-After = %q, want about the 2m link timeout", r.Header.Get("Retry-After"))
	}
	if s := num(e.rawItem(t, "gi-doubt"), "healthDeadline"); s != "" {
		t.Fatalf("the rejected claim rewrote the record")
	}
	claim("gi-dead", -lifecycle.DefaultPolicy.LinkTimeout-time.Second)
	created := str(e.rawItem(t, "gi-dead"), "createdAt")
	r = e.allocate(t, `{"gameInstanceId":"gi-dead","desiredRegion":"us-west"}`).expect(t, http.StatusCreated, "")
	if got := str(e.rawItem(t, "gi-dead"), "createdAt"); got != created || r.Body["createdAt"] != created {
		t.Fatalf("createdAt changed on takeover: %s -> stored %s, answered %v", created, got, r.Body["createdAt"])
	}
	// The outcome is answered as stored without being read back: the
	// answer is what a GET reads.
	if got := e.do(t, http.MethodGet, "/v1/allocations/gi-dead", "").expect(t, http.StatusOK, ""); got.Raw != r.Raw {
		t.Fatalf("answered\n%s\nbut stored\n%s", r.Raw, got.Raw)
	}
	if n := len(e.stub.Calls()); n != 1 {
		t.Fatalf("%d upstream calls, want 1 (only the takeover)", n)
	}
}

func TestBadRequestsLeaveNoState(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, body := range []string{
		`{"gameInstanceId":"bad id!","desiredRegion":"us-west"}`,
		`{"gameInstanceId":"gi-x","desiredRegion":"us-west","extra":1}`,
		`{"gameInstanceId":"gi-x"}`, // no region and no FALLBACK_REGION
		`{"gameInstanceId":"gi-x","desiredRegion":"us-west","gameServerVersion":"bad env::fleet"}`,
		`not json`,
	} {
		e.allocate(t, body).expect(t, http.StatusBadRequest, "INVALID_REQUEST")
	}
	if item := e.rawItem(t, "gi-x"); item != nil || len(e.stub.Calls()) != 0 {
		t.Fatalf("bad requests left state: item %v, %d calls", item, len(e.stub.Calls()))
	}
}
