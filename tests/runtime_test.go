//go:build integration

package tests

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/local/gamelift"
	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// eventExpectations is what each file in events/ must produce when fed, in
// this order, to the built bootstrap of its function. status is the HTTP
// status for HTTP API events, 0 for others (check then sees the payload).
// Every file in events/ must be listed, so a new event cannot go untested.
var eventExpectations = []struct {
	file     string
	function string
	status   int
	check    func(t *testing.T, body map[string]any)
}{
	{"allocate-new.json", "AllocateFunction", 201, func(t *testing.T, b map[string]any) {
		if b["state"] != "Allocated" || b["gameInstanceId"] != "gi-event-1" || b["region"] != "us-west" {
			t.Errorf("body = %v", b)
		}
	}},
	// eu-central-1 is behind its own Allocator (refs["Allocators"] below).
	{"allocate-preferred-regions.json", "AllocateFunction", 201, func(t *testing.T, b map[string]any) {
		attempts, _ := b["attempts"].([]any)
		if b["region"] != "eu-central-1" || len(attempts) != 1 || attempts[0].(map[string]any)["allocatorRegion"] != "prod-eu-central" {
			t.Errorf("body = %v, want eu-central-1 from its own Allocator", b)
		}
	}},
	// eu-baremetal is a studio's own Agones cluster (the stand-in, over
	// mutual TLS with its client secret in moto): a whole Ready server.
	{"allocate-agones.json", "AllocateFunction", 201, func(t *testing.T, b map[string]any) {
		attempts, _ := b["attempts"].([]any)
		if b["region"] != "eu-baremetal" || serverAddress(response{Body: b}) != "127.0.0.1:7200" || len(attempts) != 1 ||
			attempts[0].(map[string]any)["allocatorKind"] != "agones" || attempts[0].(map[string]any)["gameServerName"] != "fleet-event-1" {
			t.Errorf("body = %v, want a GameServer of the Agones stand-in", b)
		}
	}},
	{"allocate-replay.json", "AllocateFunction", 200, func(t *testing.T, b map[string]any) {
		if b["state"] != "Allocated" {
			t.Errorf("body = %v", b)
		}
	}},
	{"allocate-bad-request.json", "AllocateFunction", 400, func(t *testing.T, b map[string]any) {
		if e, _ := b["error"].(map[string]any); e["code"] != "INVALID_REQUEST" || !strings.Contains(e["message"].(string), "gameInstanceId") {
			t.Errorf("body = %v", b)
		}
	}},
	{"get-allocation.json", "AllocateFunction", 200, func(t *testing.T, b map[string]any) {
		if b["state"] != "Allocated" || b["createdAt"] == nil {
			t.Errorf("body = %v", b)
		}
	}},
	{"link.json", "LinkBackFunction", 200, func(t *testing.T, b map[string]any) {
		if b["state"] != "Linked" || b["linkedServer"].(map[string]any)["serverName"] != "sample-server-1" {
			t.Errorf("body = %v", b)
		}
	}},
	// The same server links again offering 4 rooms: it stays Linked, now
	// holding one of them (end.json gives it back).
	{"link-rooms.json", "LinkBackFunction", 200, func(t *testing.T, b map[string]any) {
		if b["state"] != "Linked" || strings.Contains(fmt.Sprint(b), "dev-session-callback-token") {
			t.Errorf("body = %v", b)
		}
	}},
	{"heartbeat.json", "LinkBackFunction", 200, func(t *testing.T, b map[string]any) {
		if b["state"] != "Linked" || b["lastHeartbeatAt"] == nil {
			t.Errorf("body = %v", b)
		}
	}},
	{"health-sweep-scheduled.json", "HealthSweepFunction", 0, func(t *testing.T, b map[string]any) {
		if b["due"] != float64(0) || b["marked"] != float64(0) {
			t.Errorf("sweep summary = %v", b)
		}
	}},
	{"end.json", "LinkBackFunction", 200, func(t *testing.T, b map[string]any) {
		if b["state"] != "Ended" || b["endReason"] != "match finished" {
			t.Errorf("body = %v", b)
		}
	}},
	{"delete-allocation.json", "AllocateFunction", 200, func(t *testing.T, b map[string]any) {
		if b["state"] != "Ended" || b["endReason"] != "match finished" {
			t.Errorf("body = %v (ending an Ended instance changes nothing)", b)
		}
	}},
	// The Agones region is cached too, without ping targets.
	{"ping-refresh-scheduled.json", "PingRefreshFunction", 0, func(t *testing.T, b map[string]any) {
		if b["upstreamRegions"] != float64(3) || !reflect.DeepEqual(b["storedRegions"], []any{"eu-baremetal", "eu-central-1", "us-west"}) ||
			b["targetsDropped"] != float64(0) || b["regionsOmitted"] != float64(0) {
			t.Errorf("refresh summary = %v", b)
		}
	}},
	// Only ap-south is under the 50 ms cap, and it has no server: the
	// placement waits, its message on PlacementQueue.
	{"allocate-queued.json", "AllocateFunction", 202, func(t *testing.T, b map[string]any) {
		if b["state"] != "Queued" || b["queuedUntil"] == nil || len(b["attempts"].([]any)) != 1 || queuedMessages(t) != 1 {
			t.Errorf("body = %v, %d messages queued", b, queuedMessages(t))
		}
	}},
	// A stale copy of its message is done with; one nobody can read is
	// handed back, to end in the dead-letter queue.
	{"placement-messages.json", "PlacementFunction", 0, func(t *testing.T, b map[string]any) {
		failures, _ := b["batchItemFailures"].([]any)
		if len(failures) != 1 || failures[0].(map[string]any)["itemIdentifier"] != "0b6f2c1e-3c1a-4d55-9a55-5a1d6a7f0002" {
			t.Errorf("batch item failures %v", failures)
		}
	}},
	// The players' latencies (the GameLift stand-in) put the match in
	// us-west, not customEventData's eu-central-1; a second copy of the
	// event allocates nothing (the Allocator count below).
	{"matchmaking-succeeded.json", "MatchmakingFunction", 0, matchPlaced},
	{"matchmaking-succeeded.json", "MatchmakingFunction", 0, matchPlaced},
	// customEventData that is not JSON: the match is recorded Failed, so
	// AllocationFailed tells its players; nothing is asked of anyone.
	{"matchmaking-invalid.json", "MatchmakingFunction", 0, func(t *testing.T, b map[string]any) {
		rec, err := store.NewGameInstances(stack.ddb, matchRefs["GameInstancesTable"]).Get(context.Background(), "5d3b9a2e-1c4f-4e8a-b0d7-2a9c6e4f8b13")
		if b != nil || err != nil || rec.State != "Failed" || rec.Failure == nil || rec.Failure.Code != "INVALID_MATCH" {
			t.Errorf("payload %v; record %+v, %v", b, rec, err)
		}
	}},
	{"stream-allocated.json", "EventsFunction", 0, streamCheck("GameServerAllocated gi-1:2:GameServerAllocated")},
	// The heartbeat (Linked → Linked) in the same batch is no event.
	{"stream-linked.json", "EventsFunction", 0, streamCheck("GameServerLinked gi-1:3:GameServerLinked")},
	{"stream-heartbeat.json", "EventsFunction", 0, streamCheck("")},
	// Claimed, queued, claimed by the worker, queued again: one event.
	{"stream-queued.json", "EventsFunction", 0, streamCheck("AllocationQueued gi-q:2:AllocationQueued")},
	{"stream-unhealthy.json", "EventsFunction", 0, streamCheck("GameInstanceUnhealthy gi-1:5:GameInstanceUnhealthy")},
	{"stream-region-unhealthy.json", "EventsFunction", 0, streamCheck("RegionHealthChanged us-west:Unhealthy:")},
	// A DescribeGameSessionPlacement as botocore signs it (AWS JSON 1.1),
	// with the event's key, but signed on 1 January 2025: refused as too
	// old, in GameLift's error shape.
	{"gamelift-describe-placement.json", "GameLiftApiFunction", 400, func(t *testing.T, b map[string]any) {
		if b["__type"] != "UnauthorizedException" || !strings.Contains(fmt.Sprint(b["Message"]), "15 minutes") {
			t.Errorf("body = %v", b)
		}
	}},
	{"get-regions.json", "RegionsFunction", 200, func(t *testing.T, b map[string]any) {
		regions, _ := b["regions"].([]any)
		// us-west and eu-baremetal have allocated (Deployed); the GameFabric
		// regions have ping targets (Deployed), the Agones one none.
		if len(regions) != 3 || regions[1].(map[string]any)["zone"] != "EU_CENTRAL" || regions[2].(map[string]any)["region"] != "us-west" ||
			regions[1].(map[string]any)["health"] != "Deployed" || regions[2].(map[string]any)["healthSince"] == nil ||
			regions[0].(map[string]any)["region"] != "eu-baremetal" || regions[0].(map[string]any)["health"] != "Deployed" {
			t.Errorf("regions = %v", b)
		}
	}},
}

// matchPlaced checks matchmaking-succeeded.json's outcome, after each
// copy of the event: one allocation, one DescribeMatchmaking call.
func matchPlaced(t *testing.T, b map[string]any) {
	rec, err := store.NewGameInstances(stack.ddb, matchRefs["GameInstancesTable"]).Get(context.Background(), "c0ec1a54-7fec-4b55-8583-76d67adb7754")
	if b != nil || err != nil || rec.State != "Allocated" || rec.Region != "us-west" || !rec.Fingerprint.Match {
		t.Errorf("payload %v; record %+v, %v", b, rec, err)
	}
	if calls := matchTickets.Calls(); len(calls) != 1 || len(calls[0]) != 2 {
		t.Errorf("DescribeMatchmaking calls %v, want one for both tickets", calls)
	}
}

// functionDirs maps template logical IDs to their functions/ folders.
var functionDirs = map[string]string{
	"AllocateFunction":    "allocate",
	"PingRefreshFunction": "pingrefresh",
	"RegionsFunction":     "regions",
	"LinkBackFunction":    "linkback",
	"HealthSweepFunction": "healthsweep",
	"EventsFunction":      "events",
	"PlacementFunction":   "placement",
	"MatchmakingFunction": "matchmaking",
	"GameLiftApiFunction": "gameliftapi",
}

// contentTypes are the functions' answers' Content-Type, when not JSON.
var contentTypes = map[string]string{"GameLiftApiFunction": "application/x-amz-json-1.1"}

// matchRefs and matchTickets are what matchmaking-succeeded.json's check
// reads: the tables, and the GameLift stand-in its bootstrap asked.
var (
	matchRefs    map[string]string
	matchTickets *gamelift.StandIn
)

// placementQueue is the PlacementQueue the bootstraps send to.
var placementQueue string

// queuedMessages counts placementQueue's messages, delayed ones included.
func queuedMessages(t *testing.T) int {
	return (&env{placementQueue: placementQueue}).pending(t)
}

// eventsQueue receives, through a rule on the bus EventsFunction puts on,
// what the stream-*.json events publish.
var eventsQueue string

// streamCheck expects a stream batch to be handled completely and to put
// exactly want ("<detail-type> <idempotencyKey prefix>") on the bus, or
// nothing when want is "".
func streamCheck(want string) func(t *testing.T, b map[string]any) {
	return func(t *testing.T, b map[string]any) {
		if failures, _ := b["batchItemFailures"].([]any); len(failures) != 0 {
			t.Fatalf("batch item failures %v", failures)
		}
		if want == "" {
			time.Sleep(300 * time.Millisecond)
			if got := receiveEvents(t, eventsQueue); len(got) != 0 {
				t.Errorf("events %q, want none", got)
			}
			return
		}
		var got []string
		testkit.WaitFor(t, 10*time.Second, want, func() bool {
			got = append(got, receiveEvents(t, eventsQueue)...)
			return len(got) > 0
		})
		time.Sleep(300 * time.Millisecond)
		got = append(got, receiveEvents(t, eventsQueue)...)
		if len(got) != 1 || !strings.HasPrefix(got[0], want) {
			t.Errorf("events %q, want one %q", got, want)
		}
	}
}

// functionEnv is the environment the template gives function, with local
// values for the deploy-time references, plus the SDK endpoint overrides.
func functionEnv(t *testing.T, function string, refs map[string]string) []string {
	t.Helper()
	vars, err := stack.template.FunctionEnv(function, refs)
	if err != nil {
		t.Fatalf("environment of %s from template.yaml: %v", function, err)
	}
	env := []string{
		"AWS_ENDPOINT_URL_DYNAMODB=" + stack.ddbEndpoint,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + stack.smEndpoint,
		"AWS_ENDPOINT_URL_EVENTBRIDGE=" + stack.smEndpoint, // moto serves every service on one port
		"AWS_ENDPOINT_URL_SQS=" + stack.smEndpoint,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_SESSION_TOKEN=local",
		"AWS_EC2_METADATA_DISABLED=true",
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

func TestBootstrapServesEveryEvent(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(stack.repoRoot, "events", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events found: %v", err)
	}
	listed := map[string]bool{}
	for _, x := range eventExpectations {
		listed[x.file] = true
	}
	sort.Strings(files)
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("events/%s has no expectation in eventExpectations", filepath.Base(f))
		}
	}

	stub := gfemu.Start("current-token")
	defer stub.Close()
	stub.Always("us-west", gfemu.Answer{})
	// The Ping Service as GameFabric runs it: its own URL and tokens.
	stub.Ping.SetTokens("current-ping-token")
	stub.Ping.SetRegions(pingRegions)
	// A second Allocator, with its own URL, tokens and region string.
	euStub := gfemu.Start("eu-token")
	defer euStub.Close()
	euStub.Always("prod-eu-central", gfemu.Answer{})
	// A studio's Agones cluster: the allocator service over mutual TLS.
	cluster := startAgones(t, agonesemu.Config{})
	cluster.Add(agonesemu.GameServer{Name: "fleet-event-1", Labels: agonesLabels, Ports: []agones.Port{{Name: "game", Port: 7200}}})
	allocators, _ := json.Marshal(map[string]map[string]string{
		"eu-central-1": {"url": euStub.AllocateURL(), "region": "prod-eu-central", "tokenSecretId": newSecret(t, `{"tokens":["eu-token"]}`)},
		"eu-baremetal": {"kind": "agones", "url": cluster.URL, "tlsSecretId": newSecret(t, cluster.Secret())}})
	refs := newTables(t)
	matchRefs = refs
	matchTickets = gamelift.New()
	matchTickets.Put(gamelift.Ticket{TicketID: "ticket-event-1", Players: []gamelift.Player{{PlayerID: "player-1", LatencyInMs: map[string]int{"custom-us-west": 40, "custom-eu-central-1": 120}}}},
		gamelift.Ticket{TicketID: "ticket-event-2", Players: []gamelift.Player{{PlayerID: "player-2", LatencyInMs: map[string]int{"custom-us-west": 60, "custom-eu-central-1": 90}}}})
	gameLift := httptest.NewServer(matchTickets)
	defer gameLift.Close()
	refs["GameServerEventBus"], eventsQueue = newEventBus(t)
	refs["PlacementQueue"] = newPlacementQueue(t)
	placementQueue = refs["PlacementQueue"]
	for k, v := range map[string]string{
		"Allocators":              string(allocators),
		"GameFabricUrl":           stub.URL,
		"GameFabricAllocatePath":  stub.AllocatePath(),
		"GameFabricPingUrl":       stub.PingURL,
		"AllocatorTokenSecretArn": newSecret(t, `{"tokens":["old-token","current-token"]}`),
		"PingTokenSecretArn":      newSecret(t, `{"tokens":["old-ping-token","current-ping-token"]}`),
		"BackendAddress":          "http://127.0.0.1:10100",
		"FallbackRegion":          "eu-central-1",
		"FallbackEnvironment":     "prag",
		"FallbackArmadaSet":       "sample-game-armada-set",
		"ZonesByRegion":           "us-west=US_WEST,eu-central-1=EU_CENTRAL",
		"GameLiftApiKeys":         newSecret(t, `{"GFGAMELIFTKEY1": "dev-gamelift-secret-key-0123456789abcdef"}`),
	} {
		refs[k] = v
	}
	ctx := context.Background()
	runtimes := map[string]*runtimeapi.Runtime{}
	for function, dir := range functionDirs {
		env := append(functionEnv(t, function, refs), "AWS_ENDPOINT_URL_GAMELIFT="+gameLift.URL)
		rt, err := runtimeapi.Start(ctx, bootstrap(t, dir), env, runtimeapi.WithFunctionName(function))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		runtimes[function] = rt
	}

	for _, x := range eventExpectations {
		rt := runtimes[x.function]
		t.Run(x.file, func(t *testing.T) {
			event, err := os.ReadFile(filepath.Join(stack.repoRoot, "events", x.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := rt.Invoke(ctx, event, 30*time.Second)
			if err != nil {
				t.Fatalf("invoke: %v\nlogs:\n%s", err, rt.Logs())
			}
			if res.FunctionError != nil {
				t.Fatalf("function error: %v\nlogs:\n%s", res.FunctionError, rt.Logs())
			}
			if x.status == 0 {
				var payload map[string]any
				if err := json.Unmarshal(res.Payload, &payload); err != nil {
					t.Fatalf("payload %s is not a JSON object", res.Payload)
				}
				x.check(t, payload)
				return
			}
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(res.Payload, &resp); err != nil {
				t.Fatalf("response %s is not an HTTP API response: %v", res.Payload, err)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
				t.Fatalf("body %q is not JSON", resp.Body)
			}
			if resp.StatusCode != x.status || resp.Headers["Content-Type"] != cmp.Or(contentTypes[x.function], "application/json") {
				t.Fatalf("status %d (%v), want %d: %s\nlogs:\n%s", resp.StatusCode, resp.Headers, x.status, resp.Body, rt.Logs())
			}
			x.check(t, body)
		})
	}
	if n := len(stub.Allocations()); n != 2 {
		t.Errorf("GameFabric allocated %d servers for the events, want 2 (gi-event-1 and the match)", n)
	}
	// link-rooms.json gave the server a record holding gi-event-1's room;
	// end.json gave the room back, through the bootstraps' transactions.
	gs, err := store.NewGameServers(stack.ddb, refs["GameServersTable"], refs["GameInstancesTable"], time.Hour).Get(ctx, stub.Calls()[0].Server)
	if err != nil || gs.Capacity != 4 || gs.InUse != 0 || len(gs.Sessions) != 0 || gs.CallbackURL != "http://127.0.0.1:7600/sessions" {
		t.Errorf("the game server's record after link-rooms.json and end.json: %v, %v", gs, err)
	}

	// Every function's logs are JSON lines tagged with the Lambda request id,
	// and hold no credential: neither the allocator token nor the partner
	// token the game server links back with.
	partnerToken, _ := stub.Calls()[0].Payload["PartnerGameToken"].(string)
	waitForLogs(t, runtimes["AllocateFunction"], `"path":"/v1/allocations/gi-event-1"`)
	waitForLogs(t, runtimes["LinkBackFunction"], `"path":"/v1/game-instances/gi-event-1/end"`)
	for function, rt := range runtimes {
		logs := rt.Logs()
		for _, secret := range []string{"current-token", "old-token", "current-ping-token", "old-ping-token", partnerToken} {
			if secret != "" && strings.Contains(logs, secret) {
				t.Errorf("%s logs contain a credential", function)
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
			var entry map[string]any
			if line == "" {
				continue
			} else if json.Unmarshal([]byte(line), &entry) != nil {
				t.Errorf("%s log line is not JSON: %q", function, line)
			} else if entry["msg"] == "request" && entry["requestId"] == nil {
				t.Errorf("%s request log without requestId: %q", function, line)
			}
		}
	}
}

func waitForLogs(t *testing.T, rt *runtimeapi.Runtime, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(rt.Logs(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return rt.Logs()
}

func TestBootstrapRefusesToStartMisconfigured(t *testing.T) {
	rt, err := runtimeapi.Start(context.Background(), bootstrap(t, "allocate"), []string{"GAMEFABRIC_URL=not-a-url", "ALLOCATE_ATTEMPT_TIMEOUT=soon",
		`GAMEFABRIC_ALLOCATORS={"eu": {"url": "ftp://eu.example"}, "ap": {"region": "prod-ap"}}`})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, err = rt.Invoke(context.Background(), []byte(`{}`), 10*time.Second)
	if err == nil {
		t.Fatal("a misconfigured function answered an invocation")
	}
	msg := err.Error() + rt.Logs()
	for _, want := range []string{"GAMEFABRIC_URL must be an absolute", "GAMEFABRIC_ALLOCATE_PATH is required", "ALLOCATOR_TOKEN_SECRET_ID is required",
		"BACKEND_ADDRESS is required", "GAME_INSTANCES_TABLE is required", "ALLOCATE_ATTEMPT_TIMEOUT must be a positive",
		`GAMEFABRIC_ALLOCATORS["eu"]: url must be an absolute`, `GAMEFABRIC_ALLOCATORS["ap"]: url is required`} {
		if !strings.Contains(msg, want) {
			t.Errorf("init failure does not say %q:\n%s", want, msg)
		}
	}
}
