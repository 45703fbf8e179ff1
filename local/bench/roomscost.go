package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

const (
	// RoomsGoal is issue 25's goal for a game's whole life on servers
	// holding RoomCapacity rooms, USD per 1M typicalGame games at the
	// default endpoint.
	RoomsGoal = 15.0
	// heartbeatsPerServer is how often the room games' sessions heartbeat
	// (their per-call figures only).
	heartbeatsPerServer = 5
)

// RoomsResult is issue 22's figures: a room placement's latency beside a
// direct allocator call, what a placement and the games of servers holding
// RoomCapacity rooms cost, and (derive) a game's bill both ways.
type RoomsResult struct {
	Latency RoomLatency
	Games   RoomGames
	Events  EventsResult // of the games placed in rooms
	// PlacementUSD is a room placement per 1M, priced like an allocation
	// in the first cost scenario; ByEndpoint a game's bill per 1M games at
	// each endpoint's default (FunctionUrl first), against Goal.
	PlacementUSD float64
	ByEndpoint   []RoomsAtEndpoint
	Goal         float64
}

// RoomGames is what the games of servers holding RoomCapacity rooms cost,
// counted by SDK middleware: the placements through the allocate handler
// in process, and every game's link-back calls through linkBackRig.
type RoomGames struct {
	Servers    int
	Heartbeats int // per session
	Placement  RoomPlacement
	// Offer is a server's link offering its rooms (its own game's link),
	// SessionLink a placed session's; Close the server's link with
	// capacity 0 before it stops; End any game's end, each giving its room
	// back (sessions and the servers' own games).
	Offer, SessionLink, Heartbeat, Close, End LifecycleCall
	// ServerBeat is a server's heartbeat for all its sessions
	// ({"allSessions": true} with its own game's token) at each
	// endpoint's default interval: the one loop a rooms server runs.
	ServerBeat map[Endpoint]LifecycleCall
	// IDPrefix starts the ids of the sessions placed (MeasureEvents reads
	// their stream records).
	IDPrefix string
}

// RoomPlacement is what placing a session in a free room costs, per
// placement: the DynamoDB requests and units (the region-health reads
// apart, amortised as an allocation's are), the take transaction among
// them, and the handler's time.
type RoomPlacement struct {
	Phase
	Rows                                         []RequestRow
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	// Takes are the TransactWriteItems, TakeUnits their write units and
	// TakeIndexUnits the FreeRoomsIndex's share of them.
	Takes, TakeUnits, TakeIndexUnits float64
	HealthReads                      float64 // region-health BatchGetItems
	// DynamoDB is the mean time waiting on DynamoDB, and Rest the rest of
	// the mean handler time: the session callback, JSON, logging.
	DynamoDB, Rest time.Duration
	BilledMs       float64 // the mean handler time, rounded up to Lambda's 1 ms
}

// MeasureRoomGames plays the games of n game servers offering
// RoomCapacity rooms each: the servers are allocated through the stack and
// link offering their rooms; their free rooms are filled through the
// allocate handler in process (every answer must be a room); every session
// links and heartbeats; the servers close their rooms (capacity 0) and
// every game ends. All but the servers' allocations are counted.
func MeasureRoomGames(ctx context.Context, s *Stack, n int, log io.Writer) (res RoomGames, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ip, err := NewInProcess(s)
	if err != nil {
		return res, err
	}
	// The sessions' per-call figures, at the default endpoint's interval;
	// a game's heartbeats are priced from the dedicated games' whole games.
	rig := newLinkBackRig(s, true, FunctionURL, FunctionURL.defaultEvery())
	defer rig.Close()
	client := newAPIClient(s.APIURL, 4)
	run := runID()
	res = RoomGames{Servers: n, Heartbeats: heartbeatsPerServer, IDPrefix: "rms-" + run + "-"}
	if err := warmHandler(ctx, ip, client, "rmw-"+run); err != nil {
		return res, err
	}
	var sessions []game
	hosts, err := openRooms(ctx, client, n, "rmg-"+run)
	defer func() {
		ids := make([]string, 0, len(sessions))
		for _, g := range sessions {
			ids = append(ids, g.id)
		}
		err = errors.Join(err, shutRooms(ctx, client, s.GameServerURL, hosts, &ids))
	}()
	if err != nil {
		return res, err
	}
	servers := make([]game, len(hosts))
	for i, h := range hosts {
		servers[i] = h.game
	}
	// A server links a few seconds after its allocation; its sessions
	// link on the same clock.
	linkedAt := rig.clock.Now().Add(5 * time.Second)
	rig.clock.Set(linkedAt)
	if res.Offer, err = rig.measure(ctx, "link", servers, 1, func(i int) string { return hosts[i].offer(RoomCapacity) }, linkedAt); err != nil {
		return res, err
	}
	for _, h := range hosts {
		h.linked = true
	}
	if res.Placement, sessions, err = placeSessions(ctx, ip, hosts, res.IDPrefix, n*(RoomCapacity-1), s.Tables["RegionHealthTable"]); err != nil {
		return res, err
	}
	if res.SessionLink, err = rig.measure(ctx, "link", sessions, 1, fixed(""), linkedAt); err != nil {
		return res, err
	}
	if res.Heartbeat, err = rig.measure(ctx, "heartbeat", sessions, heartbeatsPerServer, fixed(""), linkedAt); err != nil {
		return res, err
	}
	if res.ServerBeat, err = measureServerBeats(ctx, s, rig, servers, linkedAt); err != nil {
		return res, err
	}
	if res.Close, err = rig.measure(ctx, "link", servers, 1, func(i int) string { return hosts[i].offer(0) }, linkedAt); err != nil {
		return res, err
	}
	for _, h := range hosts {
		h.closed = true
	}
	if res.End, err = rig.measure(ctx, "end", append(sessions, servers...), 1, fixed(`{"reason":"bench"}`), linkedAt); err != nil {
		return res, err
	}
	sessions = nil
	for _, h := range hosts {
		h.ended = true
	}
	res.Offer.Name, res.SessionLink.Name = fmt.Sprintf("link offering %d rooms (a server's own game)", RoomCapacity), "link (a session placed in a room)"
	res.Close.Name, res.End.Name = "link with capacity 0 (a server closing its rooms)", "end (a room given back)"
	p := res.Placement
	progress(log, "room games: a placement = %.2f DynamoDB requests, %.2f RRU, %.2f WRU (take: %.2f); an end %.2f WRU; %d servers × %d rooms",
		p.Requests, p.ReadUnits, p.WriteUnits, p.TakeUnits, res.End.WriteUnits, n, RoomCapacity)
	return res, nil
}

// warmHandler makes the handler's first call, which fetches the
// Allocator's token and reads region health: before any room is offered,
// so it is a server from the Allocator, ended at once.
func warmHandler(ctx context.Context, ip *InProcess, client *allocclient.Client, id string) error {
	if status, _, err := ip.Allocate(ctx, id, RegionOK); err != nil || status != http.StatusCreated {
		return fmt.Errorf("room games: warm-up allocation: %d %v", status, err)
	}
	return endAll(ctx, client, []string{id})
}

// placeSessions allocates n sessions through the in-process handler,
// counting its requests; each must land in a room of hosts, whose session
// callback hands over the session's PartnerGameToken. It returns the
// sessions placed so far on a failure too, to be ended.
func placeSessions(ctx context.Context, ip *InProcess, hosts []*roomHost, prefix string, n int, healthTable string) (RoomPlacement, []game, error) {
	ip.Counter.Take()
	var took []time.Duration
	sessions := make([]game, 0, n)
	start := time.Now()
	for i := range n {
		id := prefix + strconv.Itoa(i)
		status, placement, d, err := ip.Placement(ctx, id, RegionOK)
		if err != nil || status != http.StatusCreated || placement != allocclient.PlacementRoom {
			if status == http.StatusCreated {
				sessions = append(sessions, game{id: id})
			}
			return RoomPlacement{}, sessions, fmt.Errorf("room games: placing %s: %d, placement %q, %v", id, status, placement, err)
		}
		took = append(took, d)
		g := game{id: id}
		for _, h := range hosts {
			if t, ok := h.sessionToken(id); ok {
				g.token = t
			}
		}
		if g.token == "" {
			return RoomPlacement{}, append(sessions, g), fmt.Errorf("room games: %s placed, but no server was called back for it", id)
		}
		sessions = append(sessions, g)
	}
	p := RoomPlacement{Phase: Phase{N: n, Elapsed: time.Since(start), Took: Summarize(took), Ops: ip.Counter.Take()}}
	p.derive(healthTable, fmt.Sprintf("room placement (%d)", n))
	return p, sessions, nil
}

// derive computes the figures per placement from the phase's operations.
func (p *RoomPlacement) derive(health, label string) {
	p.Rows = requestRows(label, p.Phase)
	p.Requests, p.ReadUnits, p.WriteUnits, p.IndexWrites, _ = dynamoPerCall(p.Ops, p.N, func(k OpKey) bool { return k.Table != health })
	_, _, _, _, p.DynamoDB = dynamoPerCall(p.Ops, p.N, func(OpKey) bool { return true })
	p.Takes, _, p.TakeUnits, p.TakeIndexUnits, _ = dynamoPerCall(p.Ops, p.N, func(k OpKey) bool { return k.Operation == "TransactWriteItems" })
	p.HealthReads, _, _, _, _ = dynamoPerCall(p.Ops, p.N, func(k OpKey) bool { return k.Table == health })
	p.Rest = max(p.Took.Mean-p.DynamoDB, 0)
	p.BilledMs = math.Ceil(toMs(p.Took.Mean))
}

// GameCost is one typicalGame's bill per 1M games, item by item: its
// allocation, its game server's link-back calls and its lifecycle events,
// logs apart as in the cost scenarios.
type GameCost struct {
	Allocation, Link, Heartbeats, End, Events float64
	Total                                     float64
}

func (g GameCost) summed() GameCost {
	g.Total = g.Allocation + g.Link + g.Heartbeats + g.End + g.Events
	return g
}

// lines names the items, for finding the largest.
func (g GameCost) lines() []CostLine {
	return []CostLine{{Item: "allocation", USD: g.Allocation}, {Item: "link", USD: g.Link}, {Item: "heartbeats", USD: g.Heartbeats},
		{Item: "end", USD: g.End}, {Item: "events", USD: g.Events}}
}

// measureServerBeats times the servers' all-sessions heartbeats at each
// endpoint's default interval, each endpoint an hour after the last on the
// rig's clocks, so that every session's first beat there is due, as in a
// running game: heartbeatsPerServer beats at the function URL's interval,
// and as many at the HTTP API's as fit in the same time (its servers beat
// faster; the reads before writing are what it adds).
func measureServerBeats(ctx context.Context, s *Stack, rig *linkBackRig, servers []game, linkedAt time.Time) (map[Endpoint]LifecycleCall, error) {
	all := fixed(`{"allSessions":true}`)
	out := map[Endpoint]LifecycleCall{}
	api := newLinkBackRig(s, true, HTTPAPI, HTTPAPI.defaultEvery())
	defer api.Close()
	for i, at := range []struct {
		e    Endpoint
		rig  *linkBackRig
		reps int
	}{{FunctionURL, rig, heartbeatsPerServer}, {HTTPAPI, api, heartbeatsPerServer * int(rig.every/api.every)}} {
		c, err := at.rig.measure(ctx, "heartbeat", servers, at.reps, all, linkedAt.Add(time.Duration(i+1)*time.Hour))
		if err != nil {
			return nil, err
		}
		c.Name = fmt.Sprintf("heartbeat for all %d sessions, %s every %s", RoomCapacity, at.e, at.rig.every)
		out[at.e] = c
	}
	return out, nil
}

// RoomsAtEndpoint is a game's bill at one endpoint's default heartbeat
// interval, on a server of its own and on one holding RoomCapacity rooms.
type RoomsAtEndpoint struct {
	Endpoint          Endpoint
	Every             time.Duration
	Capacity          int // games a server holds: RoomCapacity
	Dedicated, Shared GameCost
	SharedRatio       float64 // Shared.Total ÷ Dedicated.Total
	// Met is Shared.Total ≤ RoomsGoal; else MissedBy and Top, the
	// largest item of Shared.
	Met      bool
	MissedBy float64
	Top      CostLine
	// Game is the dedicated game's scenario, for what dominates it.
	Game *LifecycleScenario
	// Beat is the server's all-sessions heartbeat at the endpoint.
	Beat LifecycleCall
}

// DedicatedGame is a game on a server of its own, from the scenario's
// measured whole game: its allocation, link, heartbeats, end and events
// as sc priced them.
func DedicatedGame(sc LifecycleScenario) GameCost {
	return GameCost{Allocation: sc.Allocation, Link: sc.Link.At(sc.Endpoint), End: sc.End.At(sc.Endpoint), Events: sc.Events,
		Heartbeats: sc.Heartbeats * sc.Heartbeat.At(sc.Endpoint)}.summed()
}

// SharedGame is one of the capacity games a server holds over its life,
// the server's own costs shared by them: the first game came with the
// server, allocated by the Allocator (allocation per 1M) and linking with
// the rooms offer, with a dedicated game's events (dedicatedEvents); the
// other capacity−1 were placed in its rooms (placement each), link as
// sessions and have roomEvents each; the server closes its rooms once
// before it stops. heartbeats is a game's share of its server's
// all-sessions heartbeats (per 1M games); every game ends giving its room
// back; the link-back calls pay e's charge.
func SharedGame(capacity int, e Endpoint, allocation, placement, heartbeats float64, g RoomGames, dedicatedEvents, roomEvents float64) GameCost {
	c := float64(max(capacity, 1))
	others := c - 1
	return GameCost{
		Allocation: (allocation + others*placement) / c,
		Link:       (g.Offer.At(e) + others*g.SessionLink.At(e) + g.Close.At(e)) / c,
		End:        g.End.At(e),
		Events:     (dedicatedEvents + others*roomEvents) / c,
		Heartbeats: heartbeats,
	}.summed()
}

// RoomPlacementUSD prices a room placement per 1M as sc prices an
// allocation: an HTTP API and a Lambda request, the placement's billed
// duration and DynamoDB units as measured, and sc's amortised region-health
// reads (in.HealthReadRRU each) and Secrets Manager calls, which a
// placement makes as an allocation does. The session callback is inside
// the billed duration; it costs nothing else on AWS.
func RoomPlacementUSD(sc Scenario, in CostInputs, p RoomPlacement) float64 {
	return prices.HTTPAPI + prices.LambdaRequests + p.BilledMs*lambdaUSDPerMs +
		p.ReadUnits*prices.DynamoRRU + p.WriteUnits*prices.DynamoWRU +
		sc.HealthReads*in.HealthReadRRU*prices.DynamoRRU + sc.SecretsCalls*prices.SecretsPer10k/1e4*1e6
}

// price fills in the per-game bills at each endpoint's default from the
// other phases' figures: the first cost scenario's allocation, and the
// dedicated games measured whole and priced (l.price first).
func (r *RoomsResult) price(m CostModel, l *LifecycleResult, dedicatedEvents float64) {
	r.ByEndpoint = nil
	if r.Games.Placement.N == 0 || len(m.Scenarios) == 0 {
		return
	}
	sc := m.Scenarios[0]
	r.PlacementUSD = RoomPlacementUSD(sc, m.Inputs, r.Games.Placement)
	for _, e := range []Endpoint{FunctionURL, HTTPAPI} {
		d := l.at(e)
		if d == nil {
			continue
		}
		a := RoomsAtEndpoint{Endpoint: e, Every: d.Every, Capacity: RoomCapacity, Dedicated: DedicatedGame(*d), Game: d, Beat: r.Games.ServerBeat[e]}
		// The server's one loop beats as often as a dedicated game's
		// server, and each beat renews all its games.
		beats := d.Heartbeats * a.Beat.At(e) / RoomCapacity
		a.Shared = SharedGame(RoomCapacity, e, sc.Total, r.PlacementUSD, beats, r.Games, dedicatedEvents, r.Events.PerGame)
		a.SharedRatio = a.Shared.Total / a.Dedicated.Total
		a.Met, a.MissedBy = a.Shared.Total <= RoomsGoal, math.Max(0, a.Shared.Total-RoomsGoal)
		a.Top = largest(a.Shared.lines())
		a.Top.Share = a.Top.USD / a.Shared.Total
		r.ByEndpoint = append(r.ByEndpoint, a)
	}
	r.Goal = RoomsGoal
}
