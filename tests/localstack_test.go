//go:build integration

package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
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
)

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
	servers := []localstack.FleetProcess{{Command: localstack.SampleServer, ConcurrentExecutions: 1, Env: []string{
		"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set", "ALLOC_PRIORITY=5",
		"ALLOC_TIMEOUT=5", "HEARTBEAT_INTERVAL=300ms", "MAX_GAME_LENGTH=2m"}}}
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": servers, "eu-central-1": servers}

	workDir := t.TempDir()
	s, logs := startLocalStack(t, cfg, workDir)
	api := s.APIURL
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
	testkit.WaitFor(t, 15*time.Second, "us-west and eu-central-1 from the ping cache", func() bool {
		_, doc := httpJSON(t, http.MethodGet, api+"/v1/regions", "", "")
		var names []string
		regions, _ := doc["regions"].([]any)
		for _, r := range regions {
			names = append(names, fmt.Sprint(r.(map[string]any)["region"]))
		}
		sort.Strings(names)
		return strings.Join(names, ",") == "eu-central-1,us-west"
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
	status, alloc := httpJSON(t, http.MethodPost, api+"/v1/allocations", "",
		`{"gameInstanceId":"gi-e2e-1","desiredRegion":"us-west","gameServerVersion":"prag::sample-game-armada-set","serverArgs":"-map=arena"}`)
	if status != http.StatusCreated {
		t.Fatalf("allocate: %d %v", status, alloc)
	}
	server, _ := alloc["server"].(map[string]any)
	if server["address"] != usWest || alloc["region"] != "us-west" || alloc["fallbackUsed"] != false {
		t.Fatalf("allocated %v in %v, want the live us-west server %s", server["address"], alloc["region"], usWest)
	}
	if got := attemptsOf(alloc); !slices.Equal(got, []string{"us-west:429", "us-west:200"}) {
		t.Fatalf("attempts = %v, want a 429 then the allocation", got)
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
	payloadFile := filepath.Join(workDir, "fleet", "us-west", "0", "payload.json")
	var payload map[string]string
	testkit.WaitFor(t, 10*time.Second, "payload.json", func() bool {
		b, err := os.ReadFile(payloadFile)
		return err == nil && json.Unmarshal(b, &payload) == nil
	})
	if info, _ := os.Stat(payloadFile); payload["GameInstanceId"] != "gi-e2e-1" || payload["ServerArgs"] != "-map=arena" ||
		payload["pragmaBackendAddress"] != api || info.Mode().Perm() != 0o600 {
		t.Fatalf("payload.json = %v (mode %v)", payload, info.Mode())
	}

	get := func(id string) map[string]any {
		_, doc := httpJSON(t, http.MethodGet, api+"/v1/allocations/"+id, "", "")
		return doc
	}
	testkit.WaitFor(t, 15*time.Second, "Linked with a heartbeat", func() bool {
		doc := get("gi-e2e-1")
		return doc["state"] == "Linked" && doc["lastHeartbeatAt"] != nil
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
		doc := get("gi-e2e-1")
		return doc["state"] == "Ended" && doc["endReason"] == "IWON"
	})

	// The fleet replaces the exited process, and the new one registers.
	testkit.WaitFor(t, 30*time.Second, "a replacement us-west server", func() bool {
		r := registeredAt(us, "e2e-us-west")
		return len(r) == 1 && r[0] != usWest
	})
	usWest = registeredAt(us, "e2e-us-west")[0]

	// Allocate in eu-central-1: served by the eu Allocator, which received
	// its own region string and sent the callback token as Bearer.
	status, second := httpJSON(t, http.MethodPost, api+"/v1/allocations", "", `{"gameInstanceId":"gi-e2e-2","desiredRegion":"eu-central-1"}`)
	if status != http.StatusCreated || second["region"] != "eu-central-1" || second["fallbackUsed"] != false {
		t.Fatalf("eu-central-1 allocation: %d %v", status, second)
	}
	if rs, addr := lastAllocation(eu); rs != "e2e-eu-central-1" || addr != euCentral {
		t.Fatalf("eu Allocator's allocation: %q %s, want e2e-eu-central-1 %s", rs, addr, euCentral)
	}

	// eu-central-1 has no server left (its one plays): the request falls
	// back to us-west, behind the other Allocator.
	status, third := httpJSON(t, http.MethodPost, api+"/v1/allocations", "", `{"gameInstanceId":"gi-e2e-3","desiredRegion":"eu-central-1"}`)
	if status != http.StatusCreated || third["region"] != "us-west" || third["fallbackUsed"] != true {
		t.Fatalf("third allocation should fall back to us-west: %d %v", status, third)
	}
	// us's rate limit (QPS 0.5, above) may still be spent: its 429s are
	// retried in us-west.
	if got := slices.DeleteFunc(attemptsOf(third), func(a string) bool { return a == "us-west:429" }); !slices.Equal(got, []string{"eu-central-1:404", "us-west:200"}) {
		t.Fatalf("attempts = %v, want eu-central-1 without a server, then us-west", attemptsOf(third))
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
