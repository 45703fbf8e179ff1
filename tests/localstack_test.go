//go:build integration

package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
)

func httpJSON(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &doc)
	return resp.StatusCode, doc
}

// The whole product on loopback: real bootstraps behind the local HTTP API,
// the GameFabric emulator, and sample game servers run by the fleet.
func TestLocalStackEndToEnd(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.API.Port, cfg.GameFabric.Port = 0, 0
	cfg.GameFabric.AllocatorTokens = []string{"e2e-allocator-token-old", "e2e-allocator-token"}
	cfg.GameFabric.RegistryTokens = []string{"e2e-registry-token"}
	// Low, to provoke a 429: a token comes back only after 1 s, so the burst
	// used up below is still gone when the allocate call arrives, even on a
	// loaded machine; the 429 says Retry-After: 1, which the retry honours.
	cfg.GameFabric.QPS, cfg.GameFabric.Burst = 1, 2
	cfg.Parameters["FallbackRegion"] = "eu-central-1"
	cfg.Fleet.Stagger = 100 * time.Millisecond
	servers := []localstack.FleetProcess{{Command: localstack.SampleServer, ConcurrentExecutions: 1, Env: []string{
		"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set", "ALLOC_PRIORITY=5",
		"ALLOC_TIMEOUT=5", "HEARTBEAT_INTERVAL=300ms", "MAX_GAME_LENGTH=2m"}}}
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": servers, "eu-central-1": servers}

	logs := &harness.SyncBuffer{}
	workDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := localstack.Start(ctx, cfg, localstack.Options{Root: stack.repoRoot, WorkDir: workDir, Log: logs})
	if err != nil {
		t.Fatalf("start the local stack: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = s.Close()
		}
		if t.Failed() {
			t.Logf("stack log:\n%s", logs.String())
		}
	}()
	api := s.APIURL

	registered := func(region string) []string {
		var out []string
		for _, srv := range s.Emulator.Servers() {
			if srv.Region == region {
				out = append(out, srv.Address)
			}
		}
		return out
	}
	harness.WaitFor(t, 30*time.Second, "a game server registered in each region", func() bool {
		return len(registered("us-west")) == 1 && len(registered("eu-central-1")) == 1
	})
	usWest := registered("us-west")[0]

	// The ping refresher runs on its schedule against the emulator. Its
	// first run waits for the fleet to register, and sees a region only
	// while a server there is unallocated: check it before allocating.
	harness.WaitFor(t, 15*time.Second, "regions from the ping cache", func() bool {
		_, doc := httpJSON(t, http.MethodGet, api+"/v1/regions", "", "")
		regions, _ := doc["regions"].([]any)
		return len(regions) == 2
	})

	// A server that registered and died before its callback: preferred by
	// priority, so the emulator must try it first and skip it.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	status, _ := httpJSON(t, http.MethodPost, s.EmulatorURL+"/"+localstack.RegistryPath, "e2e-registry-token",
		fmt.Sprintf(`{"address":%q,"region":"us-west","priority":0,"attributes":{"env":"prag","armadaset":"sample-game-armada-set"},"callback":{"token":"x","url":"%s/allocate"},"ports":{"game":1}}`, deadAddr, deadAddr))
	if status/100 != 2 {
		t.Fatalf("registering the dead server: %d", status)
	}
	// Use up the emulator's burst so the first allocate attempt gets 429.
	for range 2 {
		httpJSON(t, http.MethodPost, s.EmulatorURL+"/"+localstack.AllocatePath, "e2e-allocator-token", `{"region":"nowhere"}`)
	}

	// Allocate: 429 retried, the dead server skipped, the live one called back.
	status, alloc := httpJSON(t, http.MethodPost, api+"/v1/allocations", "",
		`{"gameInstanceId":"gi-e2e-1","desiredRegion":"us-west","gameServerVersion":"prag::sample-game-armada-set","serverArgs":"-map=arena"}`)
	if status != http.StatusCreated {
		t.Fatalf("allocate: %d %v", status, alloc)
	}
	server, _ := alloc["server"].(map[string]any)
	attempts, _ := alloc["attempts"].([]any)
	if server["address"] != usWest || alloc["region"] != "us-west" {
		t.Fatalf("allocated %v in %v, want the live us-west server %s", server["address"], alloc["region"], usWest)
	}
	if len(attempts) != 2 || attempts[0].(map[string]any)["status"] != float64(429) {
		t.Fatalf("attempts = %v, want a 429 then the allocation", attempts)
	}
	for _, srv := range s.Emulator.Servers() {
		if srv.Address == deadAddr {
			t.Fatalf("the dead server is still registered")
		}
	}

	// The callback wrote payload.json in the server's working directory.
	payloadFile := filepath.Join(workDir, "fleet", "us-west", "0", "payload.json")
	var payload map[string]string
	harness.WaitFor(t, 10*time.Second, "payload.json", func() bool {
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
	harness.WaitFor(t, 15*time.Second, "Linked with a heartbeat", func() bool {
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
	harness.WaitFor(t, 10*time.Second, "Ended (IWON)", func() bool {
		doc := get("gi-e2e-1")
		return doc["state"] == "Ended" && doc["endReason"] == "IWON"
	})

	// The fleet replaces the exited process, and the new one registers.
	harness.WaitFor(t, 30*time.Second, "a replacement us-west server", func() bool {
		r := registered("us-west")
		return len(r) == 1 && r[0] != usWest
	})

	// The replacement is taken; the next us-west request falls back.
	status, second := httpJSON(t, http.MethodPost, api+"/v1/allocations", "", `{"gameInstanceId":"gi-e2e-2","desiredRegion":"us-west"}`)
	if status != http.StatusCreated || second["region"] != "us-west" {
		t.Fatalf("second allocation: %d %v", status, second)
	}
	status, third := httpJSON(t, http.MethodPost, api+"/v1/allocations", "", `{"gameInstanceId":"gi-e2e-3","desiredRegion":"us-west"}`)
	if status != http.StatusCreated || third["region"] != "eu-central-1" || third["fallbackUsed"] != true {
		t.Fatalf("third allocation should fall back to eu-central-1: %d %v", status, third)
	}

	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	closed = true
	if n := s.Fleet.Running(); len(n) != 0 && (n["us-west"] != 0 || n["eu-central-1"] != 0) {
		t.Errorf("game servers still running after Close: %v", n)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(api, "http://"), time.Second); err == nil {
		t.Errorf("the local API still answers after Close")
	}
	out := logs.String()
	for _, secret := range []string{payload["PartnerGameToken"], "e2e-allocator-token", "e2e-registry-token"} {
		if secret != "" && strings.Contains(out, secret) {
			t.Errorf("the stack's logs contain a credential")
		}
	}
}
