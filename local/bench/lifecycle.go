package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// A game's server links a few seconds after its allocation, heartbeats
// and ends typicalGame after it; heartbeatsPerServer is how often the room
// games' sessions heartbeat (their per-call figures only).
const (
	heartbeatsPerServer = 5
	typicalGame         = 20 * time.Minute
	linkAfter           = 5 * time.Second
	// LifeGoal and RoomsGoal are issue 25's goals for a game's whole life,
	// USD per 1M typicalGame games at the default endpoint.
	LifeGoal, RoomsGoal = 40.0, 15.0
)

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

// LifecycleResult is a whole typicalGame played per scenario (endpoint ×
// heartbeat interval), priced per 1M games.
type LifecycleResult struct {
	Game      time.Duration
	Games     int // per scenario
	Scenarios []LifecycleScenario
	// IDPrefix starts the ids of the default FunctionUrl scenario's games
	// (MeasureEvents reads their stream records), and Heartbeats is how
	// many each of them made.
	IDPrefix   string
	Heartbeats int
	// Goal is LifeGoal; Default the FunctionUrl default's scenario and
	// HTTPDefault the HttpApi one's, once priced (price).
	Goal                 float64
	Default, HTTPDefault *LifecycleScenario
}

// lifecycleScenarios: both endpoints at both intervals, defaults marked.
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
// handler in process, configured as the deployment is for the scenario's
// endpoint (linkBackRig), on the rig's clock.
func MeasureLifecycle(ctx context.Context, s *Stack, n int, log io.Writer) (LifecycleResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	res := LifecycleResult{Game: typicalGame, Games: n, Goal: LifeGoal, Scenarios: lifecycleScenarios()}
	// The first calls of a run are slower (DynamoDB Local's JIT, new
	// connections): a game not counted, so the first scenario is not
	// billed for them.
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

// allocated writes an Allocated record the way an allocation leaves it,
// with a known link-back token: the claim, then the outcome.
func allocated(ctx context.Context, records *store.GameInstances, g game, now time.Time) error {
	id := g.id
	rec := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocating, ClaimID: "bench-" + id,
		PartnerGameTokenHash: gameinstance.HashToken(g.token), Fingerprint: gameinstance.Fingerprint{DesiredRegion: RegionOK},
		LeaseExpiresAt: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now, HealthDeadline: now.Add(lifecycle.DefaultPolicy.LinkTimeout)}
	if err := records.Claim(ctx, rec, now); err != nil {
		return fmt.Errorf("set up %s: %w", id, err)
	}
	rec.State, rec.Region = gameinstance.StateAllocated, RegionOK
	rec.Server = &gameinstance.Server{Address: "127.0.0.1:7777", IP: "127.0.0.1", Ports: map[string]int{"game": 7777}}
	if _, err := records.Finish(ctx, rec); err != nil {
		return fmt.Errorf("set up %s: %w", id, err)
	}
	return nil
}

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
