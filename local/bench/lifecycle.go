package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// A game's server links a few seconds after its allocation, heartbeats
// and ends typicalGame after it.
const (
	typicalGame = 20 * time.Minute
	linkAfter   = 5 * time.Second
	// LifeGoal is issue 25's goal for a dedicated game's whole life, USD
	// per 1M typicalGame games at the default endpoint.
	LifeGoal = 40.0
)

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
	run := runID()
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

// LifecycleScenario is a whole game at one endpoint and heartbeat
// interval: what its calls cost, measured (play), and priced (price).
type LifecycleScenario struct {
	Endpoint Endpoint
	Every    time.Duration
	Default  bool // the interval the deployment advises at Endpoint
	// Link, Heartbeat and End are per call over every game played.
	Link, Heartbeat, End LifecycleCall
	// Per game: the calls (Heartbeats of them heartbeats), their DynamoDB
	// requests and units (index and failed conditional writes included).
	Calls, Heartbeats                            float64
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	// CallsUSD is the calls per 1M games (Lines, item by item); WholeLife
	// adds the allocation and the events; Top is its largest item, and
	// MissedBy how far it is over LifeGoal (0 when met).
	Lines               []CostLine
	CallsUSD, WholeLife float64
	Allocation, Events  float64
	Top                 CostLine
	MissedBy            float64
	Met                 bool
	// Why a game costs what it does, measured: its DynamoDB writes per 1M
	// games and their share of WholeLife, the HealthDeadlineIndex units
	// its heartbeats write per game, and WholeLife without them.
	WritesUSD, WritesShare                      float64
	HeartbeatIndexWrites, WithoutHeartbeatIndex float64
}

// heartbeatJitter is how much later than every a server's next heartbeat
// arrives: it restarts its timer once answered. Deterministic, 20–60 ms.
func heartbeatJitter(beat int) time.Duration {
	return 20*time.Millisecond + time.Duration(beat*7919%41)*time.Millisecond
}

// play plays n games through a rig configured for the scenario's
// endpoint: allocated, linked linkAfter later, heartbeats every sc.Every
// plus jitter, ended typicalGame after the allocation. The games move in
// step, one shared clock; each kind of call is counted on its own.
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
	linkedAt := start.Add(linkAfter)
	rig.clock.Set(linkedAt)
	var err error
	if sc.Link, err = rig.measure(ctx, "link", games, 1, fixed(`{"address":"127.0.0.1:7777","ports":{"game":7777}}`), linkedAt); err != nil {
		return err
	}
	if sc.Heartbeat, err = rig.heartbeats(ctx, games, linkedAt, start.Add(typicalGame)); err != nil {
		return err
	}
	rig.clock.Set(start.Add(typicalGame))
	if sc.End, err = rig.measure(ctx, "end", games, 1, fixed(`{"reason":"bench"}`), linkedAt); err != nil {
		return err
	}
	sc.perGame(n)
	return nil
}

// heartbeats makes every game heartbeat every r.every plus jitter from
// linkedAt until end, all of them at each beat.
func (r *linkBackRig) heartbeats(ctx context.Context, games []game, linkedAt, end time.Time) (LifecycleCall, error) {
	r.counter.Take()
	var took []time.Duration
	at := linkedAt
	for beat := 1; ; beat++ {
		at = at.Add(r.every + heartbeatJitter(beat))
		if !at.Before(end) {
			break
		}
		r.clock.Set(at)
		for _, g := range games {
			d, err := linkBackCall(ctx, r.api.URL, g.id, "heartbeat", g.token, "")
			if err != nil {
				return LifecycleCall{}, err
			}
			took = append(took, d)
		}
	}
	return r.priced("heartbeat", took), nil
}

// perGame sums a game's calls from the per-call figures of n games.
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

// callLines are a game's link-back calls per 1M games, item by item, from
// the scenario's measured per-game figures.
func (sc LifecycleScenario) callLines() []CostLine {
	p := prices
	billedMs := math.Ceil(toMs(sc.Link.Took.Mean)) + sc.Heartbeats*math.Ceil(toMs(sc.Heartbeat.Took.Mean)) + math.Ceil(toMs(sc.End.Took.Mean))
	lines := []CostLine{
		{Item: "Lambda requests", Basis: fmt.Sprintf("%.1f calls × $%.2f/1M", sc.Calls, p.LambdaRequests), USD: sc.Calls * p.LambdaRequests},
		{Item: "Lambda duration", Basis: fmt.Sprintf("%.0f ms billed per game (each call's mean handler time rounded up)", billedMs), USD: billedMs * lambdaUSDPerMs},
	}
	if g := sc.Endpoint.gateway(); g > 0 {
		lines = append(lines, CostLine{Item: "HTTP API requests", Basis: fmt.Sprintf("%.1f calls × $%.2f/1M", sc.Calls, g), USD: sc.Calls * g})
	}
	return append(lines,
		CostLine{Item: "DynamoDB reads", Basis: fmt.Sprintf("%.2f RRU per game × $%.3f/1M", sc.ReadUnits, p.DynamoRRU), USD: sc.ReadUnits * p.DynamoRRU},
		CostLine{Item: "DynamoDB writes", Basis: fmt.Sprintf("%.2f WRU per game (%.2f on the index) × $%.3f/1M", sc.WriteUnits, sc.IndexWrites, p.DynamoWRU),
			USD: sc.WriteUnits * p.DynamoWRU})
}

// price fills in the scenario's bill per 1M games: its calls, and its
// whole life with the allocation's and the events' per-game prices.
func (sc *LifecycleScenario) price(allocation, events float64) {
	sc.Lines, sc.CallsUSD = sc.callLines(), 0
	for _, l := range sc.Lines {
		sc.CallsUSD += l.USD
	}
	sc.Allocation, sc.Events = allocation, events
	sc.WholeLife = allocation + sc.CallsUSD + events
	life := append(slices.Clone(sc.Lines),
		CostLine{Item: "allocation", USD: allocation}, CostLine{Item: "events", USD: events})
	sc.Top = largest(life)
	sc.WritesUSD = sc.WriteUnits * prices.DynamoWRU
	if sc.WholeLife > 0 {
		sc.Top.Share, sc.WritesShare = sc.Top.USD/sc.WholeLife, sc.WritesUSD/sc.WholeLife
	}
	sc.Met, sc.MissedBy = sc.WholeLife <= LifeGoal, math.Max(0, sc.WholeLife-LifeGoal)
	// What the heartbeats write to HealthDeadlineIndex, and the whole life
	// without it: the next step when the goal is missed.
	sc.HeartbeatIndexWrites = sc.Heartbeats * sc.Heartbeat.IndexWrites
	sc.WithoutHeartbeatIndex = sc.WholeLife - sc.HeartbeatIndexWrites*prices.DynamoWRU
}

// price prices every scenario given an allocation's and a game's events'
// price per 1M, and points Default and HTTPDefault at the defaults.
func (l *LifecycleResult) price(allocation, events float64) {
	l.Goal = LifeGoal
	for i := range l.Scenarios {
		sc := &l.Scenarios[i]
		if sc.Heartbeat.N == 0 {
			continue
		}
		sc.price(allocation, events)
		if sc.Default && sc.Endpoint == FunctionURL {
			l.Default = sc
		} else if sc.Default {
			l.HTTPDefault = sc
		}
	}
}

// at is the measured default scenario at endpoint e, nil if none.
func (l *LifecycleResult) at(e Endpoint) *LifecycleScenario {
	if e == FunctionURL {
		return l.Default
	}
	return l.HTTPDefault
}
