package bench

import (
	"context"
	"fmt"
	"time"
)

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
