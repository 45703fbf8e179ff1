package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// game is a game instance a game server calls back for, with its
// PartnerGameToken.
type game struct{ id, token string }

// Endpoint is where game servers call (the template's GameServerEndpoint).
type Endpoint string

const (
	FunctionURL Endpoint = defaults.GameServerEndpointFunctionURL
	HTTPAPI     Endpoint = defaults.GameServerEndpointHTTPAPI
)

// config is LinkBackFunction's configuration at e with the template's
// defaults, on the given tables ("" servers: no rooms): the bench builds
// its link-back service from it as the function does.
func (e Endpoint) config(instances, servers string) config.Lifecycle {
	env := map[string]string{"GAME_INSTANCES_TABLE": instances, "GAME_SERVERS_TABLE": servers, "GAME_SERVER_ENDPOINT": string(e)}
	return config.Must(config.LoadLifecycle(func(k string) string { return env[k] }))
}

// gateway is what the endpoint adds per call: a function URL is free.
func (e Endpoint) gateway() float64 {
	if e == HTTPAPI {
		return prices.HTTPAPI
	}
	return 0
}

// defaultEvery is the heartbeat interval the deployment advises at e.
func (e Endpoint) defaultEvery() time.Duration {
	return e.config("-", "").HeartbeatInterval
}

// LifecycleCall is what one kind of link-back call costs, measured.
type LifecycleCall struct {
	Name       string
	N          int
	Took       Summary // handler time in process, DynamoDB Local round trips included
	Requests   float64 // DynamoDB requests per call
	ReadUnits  float64 // per call
	WriteUnits float64 // per call, index writes and failed conditional writes included
	// IndexWrites is the HealthDeadlineIndex share of WriteUnits, and
	// FailedWrites the conditional writes refused (DynamoDB bills each
	// at least 1 WRU; DynamoDB Local reports none), in WriteUnits.
	IndexWrites, FailedWrites float64
	// USDPerMillion: Lambda request + billed duration + DynamoDB, as
	// behind a function URL; At adds the endpoint's own charge.
	USDPerMillion float64
}

// At is the call's price per 1M at endpoint e.
func (c LifecycleCall) At(e Endpoint) float64 { return c.USDPerMillion + e.gateway() }

// linkBackRig is the link-back handler in process, as LinkBackFunction
// builds it, but with a counting DynamoDB client against the stack's
// DynamoDB Local and the service's clock in the bench's hands. The
// bootstraps are separate processes whose clients cannot be instrumented.
type linkBackRig struct {
	counter *SDKCounter
	clock   *harness.Clock
	api     *httptest.Server
	records *store.GameInstances
	// counted are the tables whose operations a call is charged for. A
	// transaction names its tables per item, not at the top, and is
	// always charged: only the room writes use one.
	counted map[string]bool
	// every is the heartbeat interval the handler advises.
	every time.Duration
}

// newLinkBackRig serves the handler on loopback, its service built as
// LinkBackFunction builds it at endpoint e (app.Lifecycle from the
// function's configuration: at HttpApi it reads before writing a
// heartbeat, as servers are told to beat more often than a period); with
// rooms, game servers may offer rooms (GAME_SERVERS_TABLE set), as in the
// stack. Its servers heartbeat every every. The clock starts on a whole
// health-index step, so which heartbeats cross a step (and move the index
// key) is the same in every run.
func newLinkBackRig(s *Stack, rooms bool, e Endpoint, every time.Duration) *linkBackRig {
	counter := NewSDKCounter()
	db := countedDynamoDB(s, counter)
	instances, servers := s.Tables["GameInstancesTable"], ""
	if rooms {
		servers = s.Tables["GameServersTable"]
	}
	cfg := e.config(instances, servers)
	records, _ := app.Records(db, instances, servers, cfg.Health.Retention)
	r := &linkBackRig{counter: counter, records: records, counted: map[string]bool{instances: true}, every: every,
		clock: harness.NewClock(time.Now().Truncate(lifecycle.DefaultPolicy.IndexStep()))}
	if rooms {
		r.counted[servers] = true
	}
	svc := app.Lifecycle(cfg, db)
	svc.Now = r.clock.Now
	r.api = httptest.NewServer(httpapi.NewLinkBackHandler(svc, cfg.HeartbeatInterval, logging.New(io.Discard, 0)))
	return r
}

func (r *linkBackRig) Close() { r.api.Close() }

// measure makes call (link, heartbeat or end) reps times for each game,
// the i-th game's with body(i), and prices it from what the counting
// client saw. Heartbeats are timed r.every apart after the initial
// delay from linkedAt, as in a running game, where each one moves the
// instance's health deadline (before it, the deadline does not move).
func (r *linkBackRig) measure(ctx context.Context, call string, games []game, reps int, body func(i int) string, linkedAt time.Time) (LifecycleCall, error) {
	r.counter.Take()
	var took []time.Duration
	for i, g := range games {
		for rep := range reps {
			if call == "heartbeat" {
				r.clock.Set(linkedAt.Add(lifecycle.DefaultPolicy.InitialDelay + time.Duration(rep+1)*r.every))
			}
			d, err := linkBackCall(ctx, r.api.URL, g.id, call, g.token, body(i))
			if err != nil {
				return LifecycleCall{}, err
			}
			took = append(took, d)
		}
	}
	return r.priced(call, took), nil
}

// priced is what the counting client saw since its last Take, per call of
// the calls timed by took.
func (r *linkBackRig) priced(call string, took []time.Duration) LifecycleCall {
	c := LifecycleCall{Name: call, N: len(took), Took: Summarize(took)}
	ops := r.counter.Take()
	include := func(k OpKey) bool { return r.counted[k.Table] || k.Operation == "TransactWriteItems" }
	c.Requests, c.ReadUnits, c.WriteUnits, c.IndexWrites, _ = dynamoPerCall(ops, c.N, include)
	c.FailedWrites = failedWrites(ops, include) / float64(max(c.N, 1))
	c.WriteUnits += c.FailedWrites
	c.USDPerMillion = callUSD(c)
	return c
}

// callUSD prices a call per 1M behind a function URL: the Lambda request,
// its billed duration (the mean handler time rounded up to Lambda's 1 ms)
// and its DynamoDB units.
func callUSD(c LifecycleCall) float64 {
	return prices.LambdaRequests + math.Ceil(toMs(c.Took.Mean))*lambdaUSDPerMs +
		c.ReadUnits*prices.DynamoRRU + c.WriteUnits*prices.DynamoWRU
}

// failedWrites counts the conditional writes DynamoDB refused: billed a
// write unit each (an item under 1 KB), though no capacity comes back.
func failedWrites(ops map[OpKey]OpCount, include func(OpKey) bool) float64 {
	var n float64
	for k, op := range ops {
		if k.Service == "DynamoDB" && include(k) && k.Operation != "TransactWriteItems" {
			n += float64(op.Errors["ConditionalCheckFailedException"])
		}
	}
	return n
}

// fixed is the same body for every game.
func fixed(body string) func(int) string { return func(int) string { return body } }

func linkBackCall(ctx context.Context, base, id, call, token, body string) (time.Duration, error) {
	status, _, took, err := postJSON(ctx, http.DefaultClient, base+"/v1/game-instances/"+id+"/"+call, token, []byte(body))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d", status)
	}
	if err != nil {
		return took, fmt.Errorf("%s %s: %w", call, id, err)
	}
	return took, nil
}
