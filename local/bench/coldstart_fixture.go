package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

const coldRegion = "us-west"

// startColdFixture starts the local components and registers servers game
// servers (no callback: allocating one dials nothing) for coldRegion.
func startColdFixture(ctx context.Context, root string, servers int) (*stack.Components, map[string]string, error) {
	cfg := stack.Defaults()
	cfg.AnyFreePorts()
	cfg.Agones = stack.AgonesConfig{} // GameFabric only, as the earlier runs measured
	c, err := stack.StartComponents(ctx, cfg, root)
	if err != nil {
		return nil, nil, fmt.Errorf("coldstart: starting local components: %w", err)
	}
	// As a parameter it is BACKEND_ADDRESS whichever the endpoint.
	backend := "http://127.0.0.1:3000"
	cfg.Parameters["BackendAddress"] = backend
	allocator, region := c.AllocatorFor(coldRegion)
	for i := range servers {
		port := 30000 + i
		body, _ := json.Marshal(map[string]any{"address": fmt.Sprintf("127.0.0.1:%d", port), "region": region, "priority": 0, "timeout": 600,
			"ports": map[string]int{"game": port}, "attributes": map[string]string{"env": benchEnvironment, "armadaset": benchArmadaSet}})
		status, msg, _, err := postJSON(ctx, allocator.RegistryURL(), allocator.RegistryToken(), body)
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("answered %d: %s", status, msg)
		}
		if err != nil {
			_ = c.Close()
			return nil, nil, fmt.Errorf("coldstart: registering a game server with the emulated Allocator: %w", err)
		}
	}
	return c, c.Refs(cfg, backend), nil
}

// coldEvent is a function's first event, a file from events/ edited per
// round, to be answered with status (0: scheduled, just succeed). The
// realistic one adds a real first request's round trips.
type coldEvent struct {
	fn, file  string
	realistic bool
	status    int
	edit      func(req *events.APIGatewayV2HTTPRequest, round int) error
	describe  string
}

// coldStartEvents are every function's first events. No realistic start:
// for PlacementFunction (it needs a Queued record under the message's
// ticket), MatchmakingFunction (a real match asks GameLift, which only the
// stack's stand-in answers), EventsFunction (moto delivers a put event to
// the SQS tap inside the call, ~0.3 s per target; EventBridge after),
// GameLiftApiFunction (events/ holds no signature that stays fresh).
var coldStartEvents = []coldEvent{
	{fn: "AllocateFunction", file: "allocate-bad-request.json", status: http.StatusBadRequest,
		describe: "POST /v1/allocations with an invalid gameInstanceId: rejected by request validation before any AWS or GameFabric call"},
	{fn: "AllocateFunction", file: "allocate-new.json", realistic: true, status: http.StatusCreated, edit: editAllocate,
		describe: "POST /v1/allocations with a fresh gameInstanceId per start: Secrets Manager (moto) token fetch, DynamoDB claim, GameFabric Allocator (emulated) allocate, DynamoDB update"},
	{fn: "LinkBackFunction", file: "link.json", status: http.StatusUnauthorized, edit: editNoAuth,
		describe: "POST …/link without its Authorization header: rejected before the DynamoDB lookup"},
	{fn: "LinkBackFunction", file: "link.json", realistic: true, status: http.StatusOK, edit: editLink,
		describe: "POST …/link for the instance allocated earlier in the same round, with its PartnerGameToken: DynamoDB read and conditional update"},
	{fn: "RegionsFunction", file: "get-regions.json", status: http.StatusMethodNotAllowed, edit: editAsPost,
		describe: "the GET /v1/regions event sent as POST: answered 405 by the function's own router without reading DynamoDB (API Gateway would not route it; it exercises the same adapter and router)"},
	{fn: "RegionsFunction", file: "get-regions.json", realistic: true, status: http.StatusOK,
		describe: "GET /v1/regions: DynamoDB scans of the ping cache and region health tables"},
	{fn: "PingRefreshFunction", file: "ping-refresh-scheduled.json",
		describe: "the scheduled event: Secrets Manager (moto) token fetch, emulated GameFabric Ping Service, then five DynamoDB requests in turn (the ping cache's Scan and BatchWriteItem, three on the region health table) — necessarily real loopback calls"},
	{fn: "HealthSweepFunction", file: "health-sweep-scheduled.json",
		describe: "the scheduled event: 16 DynamoDB queries for overdue instances (one per health index shard, at once) and a Scan of the game servers for the rooms gauge — necessarily real loopback calls"},
	{fn: "PlacementFunction", file: "placement-messages.json",
		describe: "an SQS batch of a stale placement message (one DynamoDB read finds no record: dropped) and an unreadable one (handed back as a batch item failure)"},
	{fn: "MatchmakingFunction", file: "matchmaking-invalid.json",
		describe: "a FlexMatch event whose customEventData is not JSON: round 1 records the match Failed (DynamoDB read, match kept, Failed record); every later start finds that record and stops (one DynamoDB read), as a redelivered event does"},
	{fn: "GameLiftApiFunction", file: "gamelift-describe-placement.json", status: http.StatusBadRequest,
		describe: "a DescribeGameSessionPlacement as botocore signs it (AWS JSON 1.1), signed on 1 January 2025: refused as UnauthorizedException (more than 15 minutes off) before any AWS call"},
	{fn: "EventsFunction", file: "stream-heartbeat.json",
		describe: "a stream batch of one heartbeat (Linked → Linked; the filters keep such records from deployed invocations): decoded and compared, no event, no AWS call"},
}

func coldInstance(round int) (id, token string) {
	return fmt.Sprintf("gi-bench-%02d", round), fmt.Sprintf("bench-partner-token-%02d-0123456789abcdef", round)
}

func editAllocate(req *events.APIGatewayV2HTTPRequest, round int) error {
	var body map[string]any
	if err := json.Unmarshal([]byte(req.Body), &body); err != nil {
		return fmt.Errorf("allocate-new.json body: %w", err)
	}
	body["gameInstanceId"], body["partnerGameToken"] = coldInstance(round)
	b, err := json.Marshal(body)
	req.Body, req.Headers["content-length"] = string(b), strconv.Itoa(len(b))
	return err
}

func editLink(req *events.APIGatewayV2HTTPRequest, round int) error {
	id, token := coldInstance(round)
	old := req.PathParameters["gameInstanceId"]
	req.RawPath = strings.Replace(req.RawPath, old, id, 1)
	req.RequestContext.HTTP.Path = strings.Replace(req.RequestContext.HTTP.Path, old, id, 1)
	req.PathParameters["gameInstanceId"] = id
	req.Headers["authorization"] = "Bearer " + token
	return nil
}

func editNoAuth(req *events.APIGatewayV2HTTPRequest, _ int) error {
	delete(req.Headers, "authorization")
	return nil
}

func editAsPost(req *events.APIGatewayV2HTTPRequest, _ int) error {
	req.RequestContext.HTTP.Method = http.MethodPost
	req.RouteKey = "POST " + req.RawPath
	req.RequestContext.RouteKey = req.RouteKey
	return nil
}

// planColdStarts lists the series in a round's order: the baseline, then
// template order (Allocate's realistic start before LinkBack's).
func planColdStarts(root string, targets []bootstrapTarget, bins map[string]string, c *stack.Components, refs map[string]string) ([]*ColdStartSeries, error) {
	plan := []*ColdStartSeries{{name: helloWorldName, bin: bins[helloWorldName], Event: "`{}`; the handler returns `{\"message\":\"hello\"}`",
		makeEvent: func(int) ([]byte, error) { return []byte("{}"), nil }, check: checkHelloWorld}}
	for _, t := range targets[:len(targets)-1] { // the baseline is last
		env, err := c.FunctionEnv(t.name, refs)
		if err != nil {
			return nil, fmt.Errorf("coldstart: environment of %s: %w", t.name, err)
		}
		planned := len(plan)
		for _, e := range coldStartEvents {
			if e.fn != t.name {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(root, "events", e.file))
			if err != nil {
				return nil, fmt.Errorf("coldstart: first event of %s: %w", t.name, err)
			}
			plan = append(plan, &ColdStartSeries{name: t.name, bin: bins[t.name], env: env, Event: "`events/" + e.file + "`: " + e.describe,
				realistic: e.realistic, makeEvent: coldEventFor(raw, e.edit), check: checkAnswer(e.status)})
		}
		if len(plan) == planned {
			return nil, fmt.Errorf("coldstart: no first event defined for %s: add it to coldStartEvents in local/bench/coldstart_fixture.go", t.name)
		}
	}
	return plan, nil
}

func coldEventFor(raw []byte, edit func(*events.APIGatewayV2HTTPRequest, int) error) func(int) ([]byte, error) {
	return func(round int) ([]byte, error) {
		if edit == nil {
			return raw, nil
		}
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("decoding the HTTP API event: %w", err)
		}
		if err := edit(&req, round); err != nil {
			return nil, err
		}
		return json.Marshal(req)
	}
}

func checkHelloWorld(res runtimeapi.Result) (string, error) {
	if res.FunctionError != nil || string(res.Payload) != `{"message":"hello"}` {
		return "", fmt.Errorf("hello-world answered %s (%v)", res.Payload, res.FunctionError)
	}
	return "ok", nil
}

// checkAnswer holds each start to its planned answer, so a misconfigured
// environment cannot pass as a fast cold start.
func checkAnswer(status int) func(runtimeapi.Result) (string, error) {
	return func(res runtimeapi.Result) (string, error) {
		var resp events.APIGatewayV2HTTPResponse
		switch {
		case res.FunctionError != nil:
			return "", fmt.Errorf("function error: %w", res.FunctionError)
		case status == 0 && !json.Valid(res.Payload):
			return "", fmt.Errorf("scheduled run answered non-JSON %q", res.Payload)
		case status == 0:
			return "ok", nil
		case json.Unmarshal(res.Payload, &resp) != nil:
			return "", fmt.Errorf("answer %q is not an HTTP API response", res.Payload)
		case resp.StatusCode != status:
			return "", fmt.Errorf("answered HTTP %d, want %d: %s", resp.StatusCode, status, resp.Body)
		}
		return fmt.Sprintf("HTTP %d", status), nil
	}
}
