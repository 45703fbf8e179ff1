package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// A game's server links linkAfter its allocation and ends typicalGame
// after it. LifeGoal is issue 35's goal for a dedicated game's whole life,
// HeartbeatGoal its goal for a heartbeat's write units on average.
const (
	typicalGame   = 20 * time.Minute
	linkAfter     = 5 * time.Second
	LifeGoal      = 45.0
	HeartbeatGoal = 1.05
)

// LifecycleResult is a whole typicalGame per scenario (endpoint ×
// heartbeat interval). IDPrefix starts the default FunctionUrl games' ids.
type LifecycleResult struct {
	Game                 time.Duration
	Games                int // per scenario
	Scenarios            []LifecycleScenario
	IDPrefix             string
	Heartbeats           int
	Goal, HeartbeatGoal  float64
	Default, HTTPDefault *LifecycleScenario
}

func lifecycleScenarios() []LifecycleScenario {
	var out []LifecycleScenario
	for _, e := range []Endpoint{FunctionURL, HTTPAPI} {
		for _, every := range []time.Duration{lifecycle.DefaultPolicy.Period, lifecycle.DefaultPolicy.Period / 3} {
			out = append(out, LifecycleScenario{Endpoint: e, Every: every, Default: every == e.defaultEvery()})
		}
	}
	return out
}

// MeasureLifecycle plays n whole games per scenario through the link-back
// handler in process.
func MeasureLifecycle(ctx context.Context, s *Stack, n int, log io.Writer) (LifecycleResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	run := runID()
	res := LifecycleResult{Game: typicalGame, Games: n, Goal: LifeGoal, Scenarios: lifecycleScenarios()}
	// Slower first calls (DynamoDB Local's JIT, new connections) are not
	// billed to any scenario.
	warm := res.Scenarios[0]
	if err := warm.play(ctx, s, 2, fmt.Sprintf("lc-%s-w-", run)); err != nil {
		return res, fmt.Errorf("lifecycle warm-up: %w", err)
	}
	for i := range res.Scenarios {
		sc := &res.Scenarios[i]
		prefix := fmt.Sprintf("lc-%s-%d-", run, i)
		if err := sc.play(ctx, s, n, prefix); err != nil {
			return res, fmt.Errorf("%s every %s: %w", sc.Endpoint, sc.Every, err)
		}
		if sc.Default && sc.Endpoint == FunctionURL {
			res.IDPrefix, res.Heartbeats = prefix, int(sc.Heartbeats)
		}
		progress(log, "lifecycle %s every %s: %.1f calls, %.1f DynamoDB requests, %.2f RRU, %.2f WRU (%.2f index) per game; calls $%.2f per 1M games",
			sc.Endpoint, sc.Every, sc.Calls, sc.Requests, sc.ReadUnits, sc.WriteUnits, sc.IndexWrites,
			sc.Link.At(sc.Endpoint)+sc.Heartbeats*sc.Heartbeat.At(sc.Endpoint)+sc.End.At(sc.Endpoint))
	}
	return res, nil
}

// allocated writes an Allocated record (the claim, then the outcome).
func allocated(ctx context.Context, records *store.GameInstances, g game, now time.Time) error {
	rec := gameinstance.Record{GameInstanceID: g.id, State: gameinstance.StateAllocating, ClaimID: "bench-" + g.id,
		PartnerGameTokenHash: gameinstance.HashToken(g.token), Fingerprint: gameinstance.Fingerprint{DesiredRegion: RegionOK},
		LeaseExpiresAt: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now, HealthDeadline: now.Add(lifecycle.DefaultPolicy.LinkTimeout)}
	_, err := records.Claim(ctx, rec, now)
	if err == nil {
		rec.State, rec.Region = gameinstance.StateAllocated, RegionOK
		rec.Server = &gameinstance.Server{Address: "127.0.0.1:7777", IP: "127.0.0.1", Ports: map[string]int{"game": 7777}}
		_, err = records.Finish(ctx, rec)
	}
	if err != nil {
		return fmt.Errorf("set up %s: %w", g.id, err)
	}
	return nil
}

// LifecycleScenario is a whole game at one endpoint and heartbeat interval.
type LifecycleScenario struct {
	Endpoint                                     Endpoint
	Every                                        time.Duration
	Default                                      bool
	Link, Heartbeat, End                         LifecycleCall
	Calls, Heartbeats                            float64
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	Lines                                        []CostLine
	CallsUSD, WholeLife, Allocation, Events      float64
	Sweep                                        float64 // the health sweep's reads
	Top                                          CostLine
	MissedBy                                     float64
	Met, HeartbeatMet                            bool
	WritesUSD, WritesShare                       float64
	HeartbeatWrites                              float64 // per game
}

// heartbeatJitter is how much later than every a server's next heartbeat
// arrives (it restarts its timer once answered): 20–60 ms, deterministic.
func heartbeatJitter(beat int) time.Duration {
	return 20*time.Millisecond + time.Duration(beat*7919%41)*time.Millisecond
}

// play plays n games in step on one clock.
func (sc *LifecycleScenario) play(ctx context.Context, s *Stack, n int, prefix string) error {
	rig := newLinkBackRig(s, false, sc.Endpoint, sc.Every)
	defer rig.Close()
	start := rig.clock.Now()
	games := make([]game, n)
	for i := range games {
		id := fmt.Sprintf("%s%d", prefix, i)
		games[i] = game{id: id, token: "bench-partner-token-" + id}
		if err := allocated(ctx, rig.records, games[i], start); err != nil {
			return err
		}
	}
	var beats []time.Time
	at := start.Add(linkAfter)
	for beat := 1; ; beat++ {
		if at = at.Add(sc.Every + heartbeatJitter(beat)); !at.Before(start.Add(typicalGame)) {
			break
		}
		beats = append(beats, at)
	}
	var err error
	if sc.Link, err = rig.calls(ctx, "link", games, []time.Time{start.Add(linkAfter)}, fixed(`{"address":"127.0.0.1:7777","ports":{"game":7777}}`)); err != nil {
		return err
	}
	if sc.Heartbeat, err = rig.calls(ctx, "heartbeat", games, beats, fixed("")); err != nil {
		return err
	}
	if sc.End, err = rig.calls(ctx, "end", games, []time.Time{start.Add(typicalGame)}, fixed(`{"reason":"bench"}`)); err != nil {
		return err
	}
	sc.perGame(n)
	return nil
}

func (sc *LifecycleScenario) perGame(n int) {
	sc.Heartbeats = float64(sc.Heartbeat.N) / float64(max(n, 1))
	sc.Calls = 2 + sc.Heartbeats
	sum := func(f func(LifecycleCall) float64) float64 {
		return f(sc.Link) + sc.Heartbeats*f(sc.Heartbeat) + f(sc.End)
	}
	sc.Requests = sum(func(c LifecycleCall) float64 { return c.Requests })
	sc.ReadUnits = sum(func(c LifecycleCall) float64 { return c.ReadUnits })
	sc.WriteUnits = sum(func(c LifecycleCall) float64 { return c.WriteUnits })
	sc.IndexWrites = sum(func(c LifecycleCall) float64 { return c.IndexWrites })
}

func (sc *LifecycleScenario) price(allocation, events, sweep float64) {
	p := prices
	ms := func(c LifecycleCall) float64 { return math.Ceil(toMs(c.Took.Mean)) }
	billedMs := ms(sc.Link) + sc.Heartbeats*ms(sc.Heartbeat) + ms(sc.End)
	sc.Lines = []CostLine{
		costLine("Lambda requests", sc.Calls*p.LambdaRequests, "%.1f calls × $%.2f/1M", sc.Calls, p.LambdaRequests),
		costLine("Lambda duration", billedMs*lambdaUSDPerMs, "%.0f ms billed per game (each call's mean handler time rounded up)", billedMs),
	}
	if g := sc.Endpoint.gateway(); g > 0 {
		sc.Lines = append(sc.Lines, costLine("HTTP API requests", sc.Calls*g, "%.1f calls × $%.2f/1M", sc.Calls, g))
	}
	sc.Lines = append(sc.Lines,
		costLine("DynamoDB reads", sc.ReadUnits*p.DynamoRRU, "%.2f RRU per game × $%.3f/1M", sc.ReadUnits, p.DynamoRRU),
		costLine("DynamoDB writes", sc.WriteUnits*p.DynamoWRU, "%.2f WRU per game (%.2f on the index) × $%.3f/1M", sc.WriteUnits, sc.IndexWrites, p.DynamoWRU))
	sc.CallsUSD, sc.Allocation, sc.Events, sc.Sweep = sumUSD(sc.Lines), allocation, events, sweep
	sc.WholeLife = allocation + sc.CallsUSD + events + sweep
	sc.Top = largest(append(slices.Clone(sc.Lines), CostLine{Item: "allocation", USD: allocation}, CostLine{Item: "events", USD: events},
		CostLine{Item: "the health sweep's reads", USD: sweep}))
	sc.WritesUSD = sc.WriteUnits * p.DynamoWRU
	if sc.WholeLife > 0 {
		sc.Top.Share, sc.WritesShare = sc.Top.USD/sc.WholeLife, sc.WritesUSD/sc.WholeLife
	}
	sc.Met, sc.MissedBy = sc.WholeLife <= LifeGoal, math.Max(0, sc.WholeLife-LifeGoal)
	sc.HeartbeatMet, sc.HeartbeatWrites = sc.Heartbeat.WriteUnits <= HeartbeatGoal, sc.Heartbeats*sc.Heartbeat.WriteUnits
}

// price prices every scenario; sweep is the health sweep's reads per game.
func (l *LifecycleResult) price(allocation, events, sweep float64) {
	l.Goal, l.HeartbeatGoal = LifeGoal, HeartbeatGoal
	for i := range l.Scenarios {
		sc := &l.Scenarios[i]
		if sc.Heartbeat.N == 0 {
			continue
		}
		sc.price(allocation, events, sweep)
		if sc.Default && sc.Endpoint == FunctionURL {
			l.Default = sc
		} else if sc.Default {
			l.HTTPDefault = sc
		}
	}
}

func (l *LifecycleResult) at(e Endpoint) *LifecycleScenario {
	if e == FunctionURL {
		return l.Default
	}
	return l.HTTPDefault
}

type game struct{ id, token string }

// Endpoint is where game servers call (the template's GameServerEndpoint).
type Endpoint string

const (
	FunctionURL Endpoint = defaults.GameServerEndpointFunctionURL
	HTTPAPI     Endpoint = defaults.GameServerEndpointHTTPAPI
)

func (e Endpoint) config(instances, servers string) config.Lifecycle {
	env := map[string]string{"GAME_INSTANCES_TABLE": instances, "GAME_SERVERS_TABLE": servers, "GAME_SERVER_ENDPOINT": string(e)}
	return config.Must(config.LoadLifecycle(func(k string) string { return env[k] }))
}

func (e Endpoint) gateway() float64 {
	if e == HTTPAPI {
		return prices.HTTPAPI
	}
	return 0
}

func (e Endpoint) defaultEvery() time.Duration { return e.config("-", "").HeartbeatInterval }

// LifecycleCall is one kind of link-back call, per call; USDPerMillion is
// behind a function URL, At adds the endpoint's charge.
type LifecycleCall struct {
	Name                                         string
	N                                            int
	Took                                         Summary
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	FailedWrites, USDPerMillion                  float64
}

// At is the call's price per 1M at endpoint e.
func (c LifecycleCall) At(e Endpoint) float64 { return c.USDPerMillion + e.gateway() }

func callUSD(c LifecycleCall) float64 {
	return invocationUSD(math.Ceil(toMs(c.Took.Mean))) + dynamoUSD(c.ReadUnits, c.WriteUnits)
}

// linkBackRig serves the link-back handler as LinkBackFunction builds it,
// with a counting DynamoDB client and its clock in our hands.
type linkBackRig struct {
	counter *SDKCounter
	clock   *harness.Clock
	api     *httptest.Server
	records *store.GameInstances
	// The tables a call is charged for; a transaction names its tables per
	// item, not at the top, and is always charged.
	counted map[string]bool
	every   time.Duration // the heartbeat interval the servers keep
}

// newLinkBackRig builds it at e (at HttpApi a heartbeat reads before it
// writes). The clock starts on a whole minute, so every run's calls fall
// alike.
func newLinkBackRig(s *Stack, rooms bool, e Endpoint, every time.Duration) *linkBackRig {
	counter := NewSDKCounter()
	db := countedDynamoDB(s, counter)
	instances, servers := s.Tables["GameInstancesTable"], ""
	if rooms {
		servers = s.Tables["GameServersTable"]
	}
	cfg := e.config(instances, servers)
	records, _ := app.Records(db, instances, servers, cfg.Health.Retention)
	r := &linkBackRig{counter: counter, records: records, counted: map[string]bool{instances: true, servers: rooms}, every: every,
		clock: harness.NewClock(time.Now().Truncate(time.Minute))}
	svc := app.Lifecycle(cfg, db)
	svc.Now = r.clock.Now
	r.api = httptest.NewServer(httpapi.NewLinkBackHandler(svc, cfg.HeartbeatInterval, logging.New(io.Discard, 0)))
	return r
}

func (r *linkBackRig) Close() { r.api.Close() }

// beats are reps heartbeats r.every apart after the initial delay (before
// it, the deadline does not move).
func (r *linkBackRig) beats(linkedAt time.Time, reps int) []time.Time {
	at := make([]time.Time, reps)
	for i := range at {
		at[i] = linkedAt.Add(lifecycle.DefaultPolicy.InitialDelay + time.Duration(i+1)*r.every)
	}
	return at
}

// calls makes call for every game at each instant of at (nil: once) and
// prices it from what the counting client saw.
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
// write unit each, though no capacity comes back (DynamoDB Local reports none).
func failedWrites(ops map[OpKey]OpCount, include func(OpKey) bool) float64 {
	var n float64
	for k, op := range ops {
		if k.Service == "DynamoDB" && include(k) && k.Operation != "TransactWriteItems" {
			n += float64(op.Errors["ConditionalCheckFailedException"])
		}
	}
	return n
}

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
