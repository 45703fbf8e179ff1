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
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

// coldBackendAddress is BackendAddress for the functions: Allocate only forwards
// it to the game server in the payload, and nothing here dials it.
const coldBackendAddress = "http://127.0.0.1:3000"

// coldFixture is the real local components every function's environment
// points at.
type coldFixture struct {
	c    *stack.Components
	refs map[string]string
}

// startColdFixture starts DynamoDB Local (tables from template.yaml), moto with
// the token secrets and the emulated GameFabric Allocators and Ping Service,
// the way the local stack does, and registers one game server per Allocate start to come.
func startColdFixture(ctx context.Context, root string, servers int) (*coldFixture, error) {
	cfg := stack.Defaults()
	cfg.AnyFreePorts()
	c, err := stack.StartComponents(ctx, cfg, root)
	if err != nil {
		return nil, fmt.Errorf("coldstart: starting local components: %w", err)
	}
	// Given as a parameter, it is BACKEND_ADDRESS whichever the
	// GameServerEndpoint (the default, FunctionUrl, would name a function
	// URL that is not served here).
	cfg.Parameters["BackendAddress"] = coldBackendAddress
	fx := &coldFixture{c: c, refs: c.Refs(cfg, coldBackendAddress)}
	if err := fx.registerServers(ctx, servers); err != nil {
		_ = c.Close()
		return nil, err
	}
	return fx, nil
}

func (fx *coldFixture) close() { _ = fx.c.Close() }

// registerServers registers n game servers through the emulated
// Allocator's registry API, as GameFabric's sidecar would. They have no
// callback, so allocating one dials nothing; each realistic Allocate start
// takes one.
func (fx *coldFixture) registerServers(ctx context.Context, n int) error {
	// Through the Allocator serving coldRegion, as its game servers would.
	allocator, regionString := fx.c.AllocatorFor(coldRegion)
	url, token := allocator.RegistryURL(), allocator.RegistryToken()
	for i := range n {
		port := 30000 + i
		body, _ := json.Marshal(map[string]any{
			"address": fmt.Sprintf("127.0.0.1:%d", port), "region": regionString, "priority": 0, "timeout": 600,
			"ports":      map[string]int{"game": port},
			"attributes": map[string]string{"env": "prag", "armadaset": "sample-game-armada-set"},
		})
		status, msg, _, err := postJSON(ctx, http.DefaultClient, url, token, body)
		if err != nil {
			return fmt.Errorf("coldstart: registering a game server with the emulated Allocator: %w", err)
		}
		if status != http.StatusCreated {
			return fmt.Errorf("coldstart: registering a game server: the emulated Allocator answered %d: %s", status, msg)
		}
	}
	return nil
}

// The series: which binary gets which first event.

// coldSeries is one (binary, first event) pair and its samples.
type coldSeries struct {
	name, bin string
	env       []string
	event     string // description for the report
	realistic bool
	makeEvent func(round int) ([]byte, error)
	check     func(runtimeapi.Result) (string, error)

	answer                        string
	totals, inits, invokes, warms []time.Duration
	trace                         InitTrace // traceInits's, for series held to the goal
}

// coldEvent is a first event: a file from events/, optionally edited.
type coldEvent struct {
	describe string
	file     string
	// edit adapts an HTTP API event for round; nil sends the file as is.
	edit func(req *events.APIGatewayV2HTTPRequest, round int) error
	// status is the HTTP status the function must answer; 0 marks a
	// scheduled event, which must simply succeed.
	status int
}

// coldStartEvents maps each function to its first events. The fast one
// (first) isolates process start, Go and SDK init and the first dispatch;
// the realistic one adds the round trips a real first request makes.
func coldStartEvents() map[string]struct{ first, realistic *coldEvent } {
	return map[string]struct{ first, realistic *coldEvent }{
		"AllocateFunction": {
			first: &coldEvent{file: "allocate-bad-request.json", status: http.StatusBadRequest,
				describe: "POST /v1/allocations with an invalid gameInstanceId: rejected by request validation before any AWS or GameFabric call"},
			realistic: &coldEvent{file: "allocate-new.json", status: http.StatusCreated, edit: editAllocate,
				describe: "POST /v1/allocations with a fresh gameInstanceId per start: Secrets Manager (moto) token fetch, DynamoDB claim, GameFabric Allocator (emulated) allocate, DynamoDB update"},
		},
		"LinkBackFunction": {
			first: &coldEvent{file: "link.json", status: http.StatusUnauthorized, edit: editNoAuth,
				describe: "POST …/link without its Authorization header: rejected before the DynamoDB lookup"},
			realistic: &coldEvent{file: "link.json", status: http.StatusOK, edit: editLink,
				describe: "POST …/link for the instance allocated earlier in the same round, with its PartnerGameToken: DynamoDB read and conditional update"},
		},
		"RegionsFunction": {
			first: &coldEvent{file: "get-regions.json", status: http.StatusMethodNotAllowed, edit: editAsPost,
				describe: "the GET /v1/regions event sent as POST: answered 405 by the function's own router without reading DynamoDB (API Gateway would not route it; it exercises the same adapter and router)"},
			realistic: &coldEvent{file: "get-regions.json", status: http.StatusOK,
				describe: "GET /v1/regions: DynamoDB scans of the ping cache and region health tables"},
		},
		"PingRefreshFunction": {
			first: &coldEvent{file: "ping-refresh-scheduled.json",
				describe: "the scheduled event: Secrets Manager (moto) token fetch, emulated GameFabric Ping Service, then five DynamoDB requests in turn (the ping cache's Scan and BatchWriteItem, three on the region health table) — necessarily real loopback calls"},
		},
		"HealthSweepFunction": {
			first: &coldEvent{file: "health-sweep-scheduled.json",
				describe: "the scheduled event: 16 DynamoDB queries for overdue instances (one per health index shard, at once) and a Scan of the game servers for the rooms gauge — necessarily real loopback calls"},
		},
		// No realistic start: a placement's real run needs a Queued record
		// under the message's ticket (MeasureQueuedCost runs them).
		"PlacementFunction": {
			first: &coldEvent{file: "placement-messages.json",
				describe: "an SQS batch of a stale placement message (one DynamoDB read finds no record: dropped) and an unreadable one (handed back as a batch item failure)"},
		},
		// No realistic start: a real match asks GameLift (DescribeMatchmaking),
		// which only the local stack's stand-in answers.
		"MatchmakingFunction": {
			first: &coldEvent{file: "matchmaking-invalid.json",
				describe: "a FlexMatch event whose customEventData is not JSON: round 1 records the match Failed (DynamoDB read, match kept, Failed record); every later start finds that record and stops (one DynamoDB read), as a redelivered event does"},
		},
		// No realistic start: putting an event on moto's bus includes moto
		// delivering it to the stack's SQS tap inside the call (~0.3 s per
		// target), which EventBridge does after answering.
		"EventsFunction": {
			first: &coldEvent{file: "stream-heartbeat.json",
				describe: "a stream batch of one heartbeat (Linked → Linked; the filters keep such records from deployed invocations): decoded and compared, no event, no AWS call"},
		},
	}
}

// coldRegion is where the registered servers live and allocate-new.json asks.
const coldRegion = "us-west"

// coldInstance is the game instance the realistic Allocate start of round
// creates and the realistic LinkBack start of the same round links.
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
	if err != nil {
		return err
	}
	req.Body = string(b)
	req.Headers["content-length"] = strconv.Itoa(len(b))
	return nil
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

// planColdStarts lists every series in the order a round runs them: the
// baseline first, then each function's fast and realistic series in
// template order (Allocate's realistic start must precede LinkBack's).
func planColdStarts(root string, targets []bootstrapTarget, bins map[string]string, fx *coldFixture) ([]*coldSeries, error) {
	hello := &coldSeries{name: helloWorldName, bin: bins[helloWorldName], event: "`{}`; the handler returns `{\"message\":\"hello\"}`",
		makeEvent: func(int) ([]byte, error) { return []byte("{}"), nil }, check: checkHelloWorld}
	plan := []*coldSeries{hello}
	specs := coldStartEvents()
	for _, t := range targets {
		if t.name == helloWorldName {
			continue
		}
		spec, ok := specs[t.name]
		if !ok {
			return nil, fmt.Errorf("coldstart: no first event defined for %s: add it to coldStartEvents in local/bench/coldstart_fixture.go", t.name)
		}
		env, err := fx.c.FunctionEnv(t.name, fx.refs)
		if err != nil {
			return nil, fmt.Errorf("coldstart: environment of %s: %w", t.name, err)
		}
		for _, e := range []*coldEvent{spec.first, spec.realistic} {
			if e == nil {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(root, "events", e.file))
			if err != nil {
				return nil, fmt.Errorf("coldstart: first event of %s: %w", t.name, err)
			}
			plan = append(plan, &coldSeries{
				name: t.name, bin: bins[t.name], env: env,
				event:     "`events/" + e.file + "`: " + e.describe,
				realistic: e == spec.realistic,
				makeEvent: coldEventFor(raw, e.edit), check: checkAnswer(e.status),
			})
		}
	}
	return plan, nil
}

func coldEventFor(raw []byte, edit func(*events.APIGatewayV2HTTPRequest, int) error) func(int) ([]byte, error) {
	if edit == nil {
		return func(int) ([]byte, error) { return raw, nil }
	}
	return func(round int) ([]byte, error) {
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
	if res.FunctionError != nil {
		return "", fmt.Errorf("function error: %w", res.FunctionError)
	}
	if string(res.Payload) != `{"message":"hello"}` {
		return "", fmt.Errorf("hello-world answered %s", res.Payload)
	}
	return "ok", nil
}

// checkAnswer verifies each start answered as planned, so a misconfigured
// environment cannot pass as a fast cold start.
func checkAnswer(status int) func(runtimeapi.Result) (string, error) {
	return func(res runtimeapi.Result) (string, error) {
		if res.FunctionError != nil {
			return "", fmt.Errorf("function error: %w", res.FunctionError)
		}
		if status == 0 {
			if !json.Valid(res.Payload) {
				return "", fmt.Errorf("scheduled run answered non-JSON %q", res.Payload)
			}
			return "ok", nil
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(res.Payload, &resp); err != nil {
			return "", fmt.Errorf("answer %q is not an HTTP API response: %w", res.Payload, err)
		}
		if resp.StatusCode != status {
			return "", fmt.Errorf("answered HTTP %d, want %d: %s", resp.StatusCode, status, resp.Body)
		}
		return fmt.Sprintf("HTTP %d", status), nil
	}
}
