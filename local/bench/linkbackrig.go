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
// defaults, on the given tables ("" servers: no rooms).
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
func (e Endpoint) defaultEvery() time.Duration { return e.config("-", "").HeartbeatInterval }

// LifecycleCall is what one kind of link-back call costs, measured: its
// handler time in process, and per call its DynamoDB requests and units
// (index writes and refused conditional writes, which DynamoDB bills at
// least 1 WRU and DynamoDB Local reports none for, included), priced per
// 1M as behind a function URL (At adds the endpoint's own charge).
type LifecycleCall struct {
	Name                                         string
	N                                            int
	Took                                         Summary
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	FailedWrites, USDPerMillion                  float64
}

// At is the call's price per 1M at endpoint e.
func (c LifecycleCall) At(e Endpoint) float64 { return c.USDPerMillion + e.gateway() }

// callUSD prices a call per 1M behind a function URL: the Lambda request,
// the mean handler time rounded up to Lambda's 1 ms, its DynamoDB units.
func callUSD(c LifecycleCall) float64 {
	return invocationUSD(math.Ceil(toMs(c.Took.Mean))) + dynamoUSD(c.ReadUnits, c.WriteUnits)
}

// linkBackRig is the link-back handler served in process as
// LinkBackFunction builds it, with a counting DynamoDB client against the
// stack's DynamoDB Local and the service's clock in the bench's hands.
type linkBackRig struct {
	counter *SDKCounter
	clock   *harness.Clock
	api     *httptest.Server
	records *store.GameInstances
	// counted are the tables a call is charged for; a transaction names its
	// tables per item, not at the top, and is always charged.
	counted map[string]bool
	every   time.Duration // the heartbeat interval the servers keep
}

// newLinkBackRig builds the service at endpoint e (at HttpApi it reads
// before writing a heartbeat, as servers beat more often than a period);
// with rooms, game servers may offer rooms. The clock starts on a whole
// health-index step, so which heartbeats move the index key is the same in
// every run.
func newLinkBackRig(s *Stack, rooms bool, e Endpoint, every time.Duration) *linkBackRig {
	counter := NewSDKCounter()
	db := countedDynamoDB(s, counter)
	instances, servers := s.Tables["GameInstancesTable"], ""
	if rooms {
		servers = s.Tables["GameServersTable"]
	}
	cfg := e.config(instances, servers)
	records, _ := app.Records(db, instances, servers, cfg.RecordRetention)
	r := &linkBackRig{counter: counter, records: records, counted: map[string]bool{instances: true, servers: rooms}, every: every,
		clock: harness.NewClock(time.Now().Truncate(lifecycle.DefaultPolicy.IndexStep()))}
	svc := app.Lifecycle(cfg, db)
	svc.Now = r.clock.Now
	r.api = httptest.NewServer(httpapi.NewLinkBackHandler(svc, cfg.HeartbeatInterval, logging.New(io.Discard, 0)))
	return r
}

func (r *linkBackRig) Close() { r.api.Close() }

// beats are reps heartbeats every r.every after the initial delay from
// linkedAt, as in a running game (before it, the deadline does not move).
func (r *linkBackRig) beats(linkedAt time.Time, reps int) []time.Time {
	at := make([]time.Time, reps)
	for i := range at {
		at[i] = linkedAt.Add(lifecycle.DefaultPolicy.InitialDelay + time.Duration(i+1)*r.every)
	}
	return at
}

// calls makes call (link, heartbeat or end) for every game, the i-th with
// body(i), at each instant of at (the clock set to it; nil: once, at the
// clock's time), and prices it from what the counting client saw.
func (r *linkBackRig) calls(ctx context.Context, call string, games []game, at []time.Time, body func(i int) string) (LifecycleCall, error) {
	r.counter.Take()
	var took []time.Duration
	for j := range max(len(at), 1) {
		if at != nil {
			r.clock.Set(at[j])
		}
		for i, g := range games {
			d, err := linkBackCall(ctx, r.api.URL, g.id, call, g.token, body(i))
			if err != nil {
				return LifecycleCall{}, err
			}
			took = append(took, d)
		}
	}
	c := LifecycleCall{Name: call, N: len(took), Took: Summarize(took)}
	ops := r.counter.Take()
	include := func(k OpKey) bool { return r.counted[k.Table] || k.Operation == "TransactWriteItems" }
	u := dynamoPerCall(ops, c.N, include)
	c.FailedWrites = failedWrites(ops, include) / float64(max(c.N, 1))
	c.Requests, c.ReadUnits, c.WriteUnits, c.IndexWrites = u.Requests, u.Reads, u.Writes+c.FailedWrites, u.IndexWrites
	c.USDPerMillion = callUSD(c)
	return c, nil
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
	status, _, took, err := postJSON(ctx, base+"/v1/game-instances/"+id+"/"+call, token, []byte(body))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d", status)
	}
	if err != nil {
		return took, fmt.Errorf("%s %s: %w", call, id, err)
	}
	return took, nil
}
