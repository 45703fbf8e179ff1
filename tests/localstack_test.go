//go:build integration

package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// backendClient calls the stack's API the way a game backend does, one try
// per call: these tests assert on each answer, which a retry would hide.
func backendClient(t *testing.T, s *localstack.Stack) *allocclient.Client {
	t.Helper()
	c, err := allocclient.New(allocclient.Options{BaseURL: s.APIURL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// allocateOnce returns the answer's status and the allocation it carries
// (an error answer's trace, if any), failing the test when none arrived.
func allocateOnce(t *testing.T, c *allocclient.Client, req allocclient.AllocateRequest) (int, *allocclient.Allocation, error) {
	t.Helper()
	a, err := c.Allocate(context.Background(), req)
	var e *allocclient.Error
	switch {
	case err == nil && a.Created:
		return http.StatusCreated, a, nil
	case err == nil:
		return http.StatusOK, a, nil
	case errors.As(err, &e):
		if e.Allocation == nil {
			return e.Status, &allocclient.Allocation{}, err
		}
		return e.Status, e.Allocation, err
	}
	t.Fatalf("allocate %s: %v", req.GameInstanceID, err)
	return 0, nil, err
}

// attemptTrace is an allocation's attempts as "region:status".
func attemptTrace(a *allocclient.Allocation) []string {
	var out []string
	for _, at := range a.Attempts {
		out = append(out, fmt.Sprintf("%s:%d", at.Region, at.Status))
	}
	return out
}

// The whole product on loopback: real bootstraps behind the local HTTP API,
// two emulated GameFabric Allocators (own URLs, tokens, region strings and
// rate limits, one sending the callback token verbatim and one as Bearer),
// the Ping Service discovering through both, and sample game servers run by
// the fleet, each registered with its Region's Allocator.
func TestLocalStackEndToEnd(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.GameFabric.Allocators = []localstack.AllocatorConfig{
		// Low, to provoke a 429: a token comes back only after 2 s, so the
		// burst used up below is still gone when the allocate call arrives,
		// even on a loaded machine; the 429 says Retry-After: 2, which the
		// retry honours (it waits up to 2 s).
		{Name: "us", QPS: 0.5, Burst: 2, CallbackAuth: localstack.CallbackAuthToken,
			AllocatorTokens: []string{"e2e-us-allocator-token-old", "e2e-us-allocator-token"},
			RegistryTokens:  []string{"e2e-us-registry-token"},
			Regions:         map[string]string{"us-west": "e2e-us-west"}},
		{Name: "eu", QPS: 20, Burst: 10, CallbackAuth: localstack.CallbackAuthBearer,
			AllocatorTokens: []string{"e2e-eu-allocator-token"},
			RegistryTokens:  []string{"e2e-eu-registry-token-old", "e2e-eu-registry-token"},
			Regions:         map[string]string{"eu-central-1": "e2e-eu-central-1"}},
	}
	cfg.GameFabric.Ping.Tokens = []string{"e2e-ping-token-old", "e2e-ping-token"}
	cfg.Parameters["FallbackRegion"] = "us-west" // behind the other Allocator than eu-central-1
	cfg.Fleet.Stagger = 100 * time.Millisecond
	servers := []localstack.FleetProcess{{Command: localstack.SampleServer, ConcurrentExecutions: 1, Env: sampleServerEnv("2m", "ALLOC_PRIORITY=5")}}
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": servers, "eu-central-1": servers}

	workDir := t.TempDir()
	s, logs, seen := startLocalStackSeen(t, cfg, workDir)
	api := s.APIURL
	backend := backendClient(t, s)
	ctx := context.Background()
	us, eu := s.Allocators[0], s.Allocators[1]
	if us.URL == eu.URL || us.URL == s.Ping.URL || eu.URL == s.Ping.URL {
		t.Fatalf("the Allocators and the Ping Service share a URL: %s, %s, %s", us.URL, eu.URL, s.Ping.URL)
	}

	// Each game server registers with its Region's Allocator (ALLOC_URL,
	// ALLOC_TOKEN) under that Allocator's region string (ALLOC_REGION).
	testkit.WaitFor(t, 30*time.Second, "a game server registered with each Allocator", func() bool {
		return len(registeredAt(us, "e2e-us-west")) == 1 && len(registeredAt(eu, "e2e-eu-central-1")) == 1
	})
	if n, m := len(us.Emulator.Servers()), len(eu.Emulator.Servers()); n != 1 || m != 1 {
		t.Fatalf("registrations: %d with us, %d with eu; want one each, under the region strings", n, m)
	}
	usWest, euCentral := registeredAt(us, "e2e-us-west")[0], registeredAt(eu, "e2e-eu-central-1")[0]

	// The ping refresher runs on its schedule against the Ping Service (its
	// own URL and token), which names Regions, not region strings. Its first
	// run waits for the fleet to register, and sees a region only while a
	// server there is unallocated: check it before allocating.
	// make dev's Agones region (no servers here) is listed too, without
	// ping targets.
	testkit.WaitFor(t, 15*time.Second, "us-west, eu-central-1 and eu-baremetal from the ping cache", func() bool {
		regions, err := backend.Regions(ctx)
		if err != nil {
			return false
		}
		var names []string
		for _, r := range regions.Regions {
			names = append(names, r.Region)
		}
		sort.Strings(names)
		return strings.Join(names, ",") == "eu-baremetal,eu-central-1,us-west"
	})

	// A server that registered and died before its callback: preferred by
	// priority, so the us Allocator must try it first and skip it.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	status, _ := httpJSON(t, http.MethodPost, us.RegistryURL(), "e2e-us-registry-token",
		fmt.Sprintf(`{"address":%q,"region":"e2e-us-west","priority":0,"attributes":{"env":"prag","armadaset":"sample-game-armada-set"},"callback":{"token":"x","url":"%s/allocate"},"ports":{"game":1}}`, deadAddr, deadAddr))
	if status/100 != 2 {
		t.Fatalf("registering the dead server: %d", status)
	}
	// Use up the us Allocator's burst so the first allocate attempt gets 429.
	for range 2 {
		httpJSON(t, http.MethodPost, us.AllocateURL(), "e2e-us-allocator-token", `{"region":"nowhere"}`)
	}

	// Allocate in us-west: served by the us Allocator, which received its
	// region string; 429 retried, the dead server skipped, the live one
	// called back with its token verbatim.
	firstRequest := allocclient.AllocateRequest{GameInstanceID: "gi-e2e-1", DesiredRegion: "us-west",
		GameServerVersion: "prag::sample-game-armada-set", ServerArgs: "-map=arena"}
	status, alloc, err := allocateOnce(t, backend, firstRequest)
	if status != http.StatusCreated {
		t.Fatalf("allocate: %d %v", status, err)
	}
	if alloc.Server == nil || alloc.Server.Address != usWest || alloc.Region != "us-west" || alloc.FallbackUsed {
		t.Fatalf("allocated %+v in %q, want the live us-west server %s", alloc.Server, alloc.Region, usWest)
	}
	if got := attemptTrace(alloc); !slices.Equal(got, []string{"us-west:429", "us-west:200"}) {
		t.Fatalf("attempts = %v, want a 429 then the allocation", got)
	}
	// The same request again is a replay: 200, the same server, nothing allocated.
	allocated := len(us.Emulator.Allocations())
	if status, again, err := allocateOnce(t, backend, firstRequest); status != http.StatusOK || again.Server == nil ||
		again.Server.Address != usWest || len(us.Emulator.Allocations()) != allocated {
		t.Fatalf("replay: %d %+v %v; the us Allocator's allocations went from %d to %d", status, again, err, allocated, len(us.Emulator.Allocations()))
	}
	if rs, addr := lastAllocation(us); rs != "e2e-us-west" || addr != usWest || len(eu.Emulator.Allocations()) != 0 {
		t.Fatalf("us Allocator's allocation: %q %s; eu's: %v", rs, addr, eu.Emulator.Allocations())
	}
	for _, srv := range us.Emulator.Servers() {
		if srv.Address == deadAddr {
			t.Fatalf("the dead server is still registered")
		}
	}

	// The callback wrote payload.json in the server's working directory.
	payloadFile, payload := payloadOf(t, workDir, "us-west")
	if info, _ := os.Stat(payloadFile); payload["GameInstanceId"] != "gi-e2e-1" || payload["ServerArgs"] != "-map=arena" ||
		payload["pragmaBackendAddress"] != functionURL(t, s) || info.Mode().Perm() != 0o600 {
		t.Fatalf("payload.json = %v (mode %v)", payload, info.Mode())
	}

	get := func(id string) *allocclient.Allocation {
		a, err := backend.Get(ctx, id)
		if err != nil {
			return &allocclient.Allocation{}
		}
		return a
	}
	testkit.WaitFor(t, 15*time.Second, "Linked with a heartbeat", func() bool {
		a := get("gi-e2e-1")
		return a.State == allocclient.StateLinked && !a.LastHeartbeatAt.IsZero()
	})

	// A player wins: the server ends the game instance and exits.
	conn, err := net.DialTimeout("tcp", usWest, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(conn, "IWON")
	sawGameOver := false
	for sc := bufio.NewScanner(conn); sc.Scan(); {
		if sc.Text() == "GAME OVER" {
			sawGameOver = true
			break
		}
	}
	conn.Close()
	if !sawGameOver {
		t.Fatal("the game server did not answer IWON with GAME OVER")
	}
	testkit.WaitFor(t, 10*time.Second, "Ended (IWON)", func() bool {
		a := get("gi-e2e-1")
		return a.State == allocclient.StateEnded && a.EndReason == "IWON"
	})
	linkedThroughFunctionURL(t, s, seen, "gi-e2e-1", payload["PartnerGameToken"])

	// The fleet replaces the exited process, and the new one registers.
	testkit.WaitFor(t, 30*time.Second, "a replacement us-west server", func() bool {
		r := registeredAt(us, "e2e-us-west")
		return len(r) == 1 && r[0] != usWest
	})
	usWest = registeredAt(us, "e2e-us-west")[0]

	// Allocate in eu-central-1: served by the eu Allocator, which received
	// its own region string and sent the callback token as Bearer.
	status, second, err := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: "gi-e2e-2", DesiredRegion: "eu-central-1"})
	if status != http.StatusCreated || second.Region != "eu-central-1" || second.FallbackUsed {
		t.Fatalf("eu-central-1 allocation: %d %+v %v", status, second, err)
	}
	if rs, addr := lastAllocation(eu); rs != "e2e-eu-central-1" || addr != euCentral {
		t.Fatalf("eu Allocator's allocation: %q %s, want e2e-eu-central-1 %s", rs, addr, euCentral)
	}

	// eu-central-1 has no server left (its one plays): the request falls
	// back to us-west, behind the other Allocator.
	status, third, err := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: "gi-e2e-3", DesiredRegion: "eu-central-1"})
	if status != http.StatusCreated || third.Region != "us-west" || !third.FallbackUsed {
		t.Fatalf("third allocation should fall back to us-west: %d %+v %v", status, third, err)
	}
	// us's rate limit (QPS 0.5, above) may still be spent: its 429s are
	// retried in us-west.
	if got := slices.DeleteFunc(attemptTrace(third), func(a string) bool { return a == "us-west:429" }); !slices.Equal(got, []string{"eu-central-1:404", "us-west:200"}) {
		t.Fatalf("attempts = %v, want eu-central-1 without a server, then us-west", attemptTrace(third))
	}
	if rs, addr := lastAllocation(us); rs != "e2e-us-west" || addr != usWest || len(eu.Emulator.Allocations()) != 1 {
		t.Fatalf("the fallback: us Allocator's last allocation %q %s (want e2e-us-west %s); eu's: %v", rs, addr, usWest, eu.Emulator.Allocations())
	}

	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if n := s.Fleet.Running(); len(n) != 0 && (n["us-west"] != 0 || n["eu-central-1"] != 0) {
		t.Errorf("game servers still running after Close: %v", n)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(api, "http://"), time.Second); err == nil {
		t.Errorf("the local API still answers after Close")
	}
	out := logs.String()
	for _, secret := range []string{payload["PartnerGameToken"], "e2e-us-allocator-token", "e2e-eu-allocator-token",
		"e2e-us-registry-token", "e2e-eu-registry-token", "e2e-ping-token"} {
		if secret != "" && strings.Contains(out, secret) {
			t.Errorf("the stack's logs contain a credential")
		}
	}
}

// functionURL is LinkBackFunction's function URL, where game servers link
// back by default (GameServerEndpoint FunctionUrl): its own port, apart
// from the API, and the base URL as Lambda gives it, a trailing slash and
// all, which is what the game servers get as pragmaBackendAddress.
func functionURL(t *testing.T, s *localstack.Stack) string {
	t.Helper()
	// The other is GameLiftApiFunction's (GameLiftApi in local/dev.yaml).
	if len(s.FunctionURLs) != 2 || s.FunctionURLs[0].LogicalID != "LinkBackFunctionUrl" || s.FunctionURLs[0].FunctionLogicalID != "LinkBackFunction" {
		t.Fatalf("function URLs %+v, want LinkBackFunctionUrl, then GameLiftApiFunctionUrl", s.FunctionURLs)
	}
	u := s.FunctionURLs[0].URL
	if !strings.HasSuffix(u, "/") || s.GameServerURL+"/" != u || strings.HasPrefix(u, s.APIURL+"/") {
		t.Fatalf("function URL %q, game-server URL %q, API %q", u, s.GameServerURL, s.APIURL)
	}
	return u
}

// linkedThroughFunctionURL checks that the game server of id linked,
// heartbeated and ended through the function URL's listener and never
// reached the API's, where the game-server routes do not exist: the API
// answers 404, as API Gateway does for a route it lacks.
func linkedThroughFunctionURL(t *testing.T, s *localstack.Stack, seen *exchanges, id, token string) {
	t.Helper()
	base := "/v1/game-instances/" + id + "/"
	for _, call := range []string{"link", "heartbeat", "end"} {
		if n := seen.answered(s.GameServerURL, base+call, http.StatusOK); n < 1 {
			t.Errorf("%s through the function URL: %d calls answered 200", call, n)
		}
	}
	if n := seen.reached(s.APIURL, "/v1/game-instances/"); n != 0 {
		t.Errorf("the API got %d game-server calls", n)
	}
	req, _ := http.NewRequest(http.MethodPost, s.APIURL+base+"heartbeat", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || string(body) != `{"message":"Not Found"}`+"\n" {
		t.Errorf("the API answered a heartbeat %d %s, want API Gateway's 404 for a route it lacks", resp.StatusCode, body)
	}
}

// payloadOf waits for the payload.json the allocation callback writes in
// the working directory of region's first game server, and reads it.
func payloadOf(t *testing.T, workDir, region string) (string, map[string]string) {
	t.Helper()
	file := filepath.Join(workDir, "fleet", region, "0", "payload.json")
	var payload map[string]string
	testkit.WaitFor(t, 10*time.Second, "payload.json", func() bool {
		b, err := os.ReadFile(file)
		return err == nil && json.Unmarshal(b, &payload) == nil
	})
	return file, payload
}
