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

// A game's server links linkAfter its allocation, heartbeats and ends
// typicalGame after it. LifeGoal is issue 25's goal for a dedicated game's
// whole life, USD per 1M games at the default endpoint.
const (
	typicalGame = 20 * time.Minute
	linkAfter   = 5 * time.Second
	LifeGoal    = 40.0
)

// LifecycleResult is a whole typicalGame played per scenario (endpoint ×
// heartbeat interval), priced per 1M games. IDPrefix starts the ids of the
// default FunctionUrl scenario's games (MeasureEvents reads their stream
// records), each of which made Heartbeats heartbeats. Default and
// HTTPDefault are the endpoints' default scenarios, once priced.
type LifecycleResult struct {
	Game                 time.Duration
	Games                int // per scenario
	Scenarios            []LifecycleScenario
	IDPrefix             string
	Heartbeats           int
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
// endpoint, on the rig's clock.
func MeasureLifecycle(ctx context.Context, s *Stack, n int, log io.Writer) (LifecycleResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	run := runID()
	res := LifecycleResult{Game: typicalGame, Games: n, Goal: LifeGoal, Scenarios: lifecycleScenarios()}
	// The first calls of a run are slower (DynamoDB Local's JIT, new
	// connections): games not counted, so no scenario is billed for them.
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
	rec := gameinstance.Record{GameInstanceID: g.id, State: gameinstance.StateAllocating, ClaimID: "bench-" + g.id,
		PartnerGameTokenHash: gameinstance.HashToken(g.token), Fingerprint: gameinstance.Fingerprint{DesiredRegion: RegionOK},
		LeaseExpiresAt: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now, HealthDeadline: now.Add(lifecycle.DefaultPolicy.LinkTimeout)}
	err := records.Claim(ctx, rec, now)
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

// LifecycleScenario is a whole game at one endpoint and heartbeat
// interval (Default: the one the deployment advises there). Link,
// Heartbeat and End are per call over every game played; per game come
// the calls (Heartbeats of them heartbeats) and their DynamoDB requests
// and units. Priced (price): the calls per 1M games item by item (Lines,
// CallsUSD), the whole life with the allocation and the events, its
// largest item, how far it is over LifeGoal; its DynamoDB writes and
// their share, the HealthDeadlineIndex units its heartbeats write per game
// and the whole life without them.
type LifecycleScenario struct {
	Endpoint                                     Endpoint
	Every                                        time.Duration
	Default                                      bool
	Link, Heartbeat, End                         LifecycleCall
	Calls, Heartbeats                            float64
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	Lines                                        []CostLine
	CallsUSD, WholeLife, Allocation, Events      float64
	Top                                          CostLine
	MissedBy                                     float64
	Met                                          bool
	WritesUSD, WritesShare                       float64
	HeartbeatIndexWrites, WithoutHeartbeatIndex  float64
}

// heartbeatJitter is how much later than every a server's next heartbeat
// arrives: it restarts its timer once answered. Deterministic, 20–60 ms.
func heartbeatJitter(beat int) time.Duration {
	return 20*time.Millisecond + time.Duration(beat*7919%41)*time.Millisecond
}

// play plays n games on a rig configured for the scenario's endpoint:
// allocated, linked linkAfter later, heartbeats every sc.Every plus
// jitter, ended typicalGame after the allocation, in step on one clock.
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

// price fills in the scenario's bill per 1M games: its calls, item by
// item, and its whole life with the allocation's and the events' prices.
func (sc *LifecycleScenario) price(allocation, events float64) {
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
	sc.CallsUSD, sc.Allocation, sc.Events = sumUSD(sc.Lines), allocation, events
	sc.WholeLife = allocation + sc.CallsUSD + events
	sc.Top = largest(append(slices.Clone(sc.Lines), CostLine{Item: "allocation", USD: allocation}, CostLine{Item: "events", USD: events}))
	sc.WritesUSD = sc.WriteUnits * p.DynamoWRU
	if sc.WholeLife > 0 {
		sc.Top.Share, sc.WritesShare = sc.Top.USD/sc.WholeLife, sc.WritesUSD/sc.WholeLife
	}
	sc.Met, sc.MissedBy = sc.WholeLife <= LifeGoal, math.Max(0, sc.WholeLife-LifeGoal)
	// What the heartbeats write to HealthDeadlineIndex, and the whole life
	// without it: the next step when the goal is missed.
	sc.HeartbeatIndexWrites = sc.Heartbeats * sc.Heartbeat.IndexWrites
	sc.WithoutHeartbeatIndex = sc.WholeLife - sc.HeartbeatIndexWrites*p.DynamoWRU
}

// price prices every measured scenario given an allocation's and a game's
// events' price per 1M, and points Default and HTTPDefault at the defaults.
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
