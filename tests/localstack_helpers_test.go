//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// startLocalStack starts the whole local product for a test, its output
// collected in the returned buffer, and stops it when the test ends (Close
// may also be called earlier), printing that output if the test failed.
// Every exchange with its HTTP API and its function URLs -- the test's
// calls and the game servers' -- is validated against the API contract.
func startLocalStack(t *testing.T, cfg localstack.Config, workDir string) (*localstack.Stack, *testkit.SyncBuffer) {
	t.Helper()
	s, logs, _ := startLocalStackSeen(t, cfg, workDir)
	return s, logs
}

// startLocalStackSeen is startLocalStack that also records which listener
// (the HTTP API or a function URL) answered each exchange.
func startLocalStackSeen(t *testing.T, cfg localstack.Config, workDir string) (*localstack.Stack, *testkit.SyncBuffer, *exchanges) {
	t.Helper()
	logs, seen := &testkit.SyncBuffer{}, &exchanges{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // start-up only
	defer cancel()
	// Registered before the stack's Close, the reporter's cleanup runs after
	// it: violations while the stack stops are still the test's.
	doc, report := contractDocument(t), contractReporter(t)
	wrap := func(h http.Handler) http.Handler { return seen.wrap(gameLiftApart(h, doc.Middleware(h, report))) }
	s, err := localstack.Start(ctx, cfg, localstack.Options{Root: stack.repoRoot, WorkDir: workDir, Log: logs, WrapAPI: wrap})
	if err != nil {
		t.Fatalf("start the local stack: %v\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		_ = s.Close()
		if t.Failed() {
			t.Logf("stack log:\n%s", logs.String())
		}
	})
	return s, logs, seen
}

// gameLiftApart serves GameLift's protocols (AWS JSON 1.1, RPC v2 CBOR)
// through plain: the API contract is the HTTP API's, and GameLift's
// service model is the placement API's (its tests hold it to real clients).
func gameLiftApart(plain, validated http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "" || r.Header.Get("Smithy-Protocol") != "" {
			plain.ServeHTTP(w, r)
			return
		}
		validated.ServeHTTP(w, r)
	})
}

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

// registeredAt lists the addresses registered with an Allocator under
// its region string.
func registeredAt(a *localstack.Allocator, regionString string) []string {
	var out []string
	for _, srv := range a.Emulator.Servers() {
		if srv.Region == regionString {
			out = append(out, srv.Address)
		}
	}
	return out
}

// attemptsOf is an allocation's attempts as "region:status".
func attemptsOf(doc map[string]any) []string {
	var out []string
	attempts, _ := doc["attempts"].([]any)
	for _, a := range attempts {
		a := a.(map[string]any)
		out = append(out, fmt.Sprintf("%v:%v", a["region"], a["status"]))
	}
	return out
}

// lastAllocation is the region string and address of an Allocator's
// latest allocation, or "" when it made none.
func lastAllocation(a *localstack.Allocator) (regionString, address string) {
	all := a.Emulator.Allocations()
	if len(all) == 0 {
		return "", ""
	}
	return all[len(all)-1].Region, all[len(all)-1].Server
}

// sampleServerEnv is the tests' sample server: registered with make dev's
// attributes, a 5 s allocation wait, heartbeats every 300 ms, games of at
// most maxGame; extra comes after the attributes.
func sampleServerEnv(maxGame string, extra ...string) []string {
	env := append([]string{"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set"}, extra...)
	return append(env, "ALLOC_TIMEOUT=5", "HEARTBEAT_INTERVAL=300ms", "MAX_GAME_LENGTH="+maxGame)
}
