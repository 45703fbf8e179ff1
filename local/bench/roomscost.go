package bench

import (
	"context"
	"encoding/json"
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
	// holding RoomCapacity rooms, USD per 1M games at the default endpoint.
	RoomsGoal = 15.0
	// heartbeatsPerServer is how often the room games' sessions heartbeat
	// (their per-call figures only).
	heartbeatsPerServer = 5
)

// RoomsResult is issue 22's figures: a room placement's latency beside a
// direct allocator call, what the games of servers holding RoomCapacity
// rooms cost and their sessions' events, and (price) a room placement
// priced like an allocation in the first cost scenario and a game's bill
// per 1M games at each endpoint's default (FunctionUrl first).
type RoomsResult struct {
	Latency      RoomLatency
	Games        RoomGames
	Events       EventsResult
	PlacementUSD float64
	ByEndpoint   []RoomsAtEndpoint
	Goal         float64
}

// RoomGames is what the games of servers holding RoomCapacity rooms cost,
// counted by SDK middleware. Offer is a server's link offering its rooms,
// SessionLink a placed session's, Close the server's link with capacity 0,
// End any game's end giving its room back; ServerBeat a server's heartbeat
// for all its sessions at each endpoint's default interval. IDPrefix
// starts the sessions' ids (MeasureEvents reads their stream records).
type RoomGames struct {
	Servers, Heartbeats                       int
	Placement                                 RoomPlacement
	Offer, SessionLink, Heartbeat, Close, End LifecycleCall
	ServerBeat                                map[Endpoint]LifecycleCall
	IDPrefix                                  string
}

// RoomPlacement is what placing a session in a free room costs, per
// placement: the DynamoDB requests and units (region-health reads apart,
// amortised as an allocation's), the take transactions among them (their
// write units, the FreeRoomsIndex's share), the mean time waiting on
// DynamoDB and the rest of the handler time (the session callback, JSON,
// logging), and the mean handler time rounded up to Lambda's 1 ms.
type RoomPlacement struct {
	Phase
	Rows                                         []RequestRow
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	Takes, TakeUnits, TakeIndexUnits             float64
	HealthReads                                  float64
	DynamoDB, Rest                               time.Duration
	BilledMs                                     float64
}

// MeasureRoomGames plays the games of n game servers offering
// RoomCapacity rooms each: the servers are allocated through the stack and
// link offering their rooms; their free rooms are filled through the
// allocate handler in process; every session links and heartbeats; the
// servers close their rooms and every game ends. All but the servers'
// allocations are counted.
func MeasureRoomGames(ctx context.Context, s *Stack, n int, log io.Writer) (res RoomGames, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ip, err := NewInProcess(s, nil)
	if err != nil {
		return res, err
	}
	// The sessions' per-call figures at the default endpoint's interval; a
	// game's heartbeats are priced from the dedicated games' whole games.
	rig := newLinkBackRig(s, true, FunctionURL, FunctionURL.defaultEvery())
	defer rig.Close()
	client := newAPIClient(s.APIURL, 4)
	run := runID()
	res = RoomGames{Servers: n, Heartbeats: heartbeatsPerServer, IDPrefix: "rms-" + run + "-"}
	// The handler's first call fetches the Allocator's token and reads
	// region health: before any room is offered, so from the Allocator.
	if resp, _, err := ip.Post(ctx, allocateRequest("rmw-"+run, RegionOK)); err != nil || resp.StatusCode != http.StatusCreated {
		return res, fmt.Errorf("room games: warm-up allocation: %d %v", resp.StatusCode, err)
	}
	if err := endAll(ctx, client, []string{"rmw-" + run}); err != nil {
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
	offer := func(capacity int) func(int) string { return func(i int) string { return hosts[i].offer(capacity) } }
	// A server links a few seconds after its allocation; its sessions link
	// on the same clock.
	linkedAt := rig.clock.Now().Add(5 * time.Second)
	if res.Offer, err = rig.calls(ctx, "link", servers, []time.Time{linkedAt}, offer(RoomCapacity)); err != nil {
		return res, err
	}
	for _, h := range hosts {
		h.linked = true
	}
	if res.Placement, sessions, err = placeSessions(ctx, ip, hosts, res.IDPrefix, n*(RoomCapacity-1), s.Tables["RegionHealthTable"]); err != nil {
		return res, err
	}
	if res.SessionLink, err = rig.calls(ctx, "link", sessions, nil, fixed("")); err != nil {
		return res, err
	}
	if res.Heartbeat, err = rig.calls(ctx, "heartbeat", sessions, rig.beats(linkedAt, heartbeatsPerServer), fixed("")); err != nil {
		return res, err
	}
	if res.ServerBeat, err = measureServerBeats(ctx, s, rig, servers, linkedAt); err != nil {
		return res, err
	}
	if res.Close, err = rig.calls(ctx, "link", servers, nil, offer(0)); err != nil {
		return res, err
	}
	for _, h := range hosts {
		h.closed = true
	}
	if res.End, err = rig.calls(ctx, "end", append(sessions, servers...), nil, fixed(`{"reason":"bench"}`)); err != nil {
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
		g := game{id: prefix + strconv.Itoa(i)}
		resp, d, err := ip.Post(ctx, allocateRequest(g.id, RegionOK))
		var answer struct {
			Placement string `json:"placement"`
		}
		if resp.StatusCode == http.StatusCreated {
			_ = json.Unmarshal([]byte(resp.Body), &answer)
			for _, h := range hosts {
				if t, ok := h.sessionToken(g.id); ok {
					g.token = t
				}
			}
			sessions = append(sessions, g)
		}
		if err != nil || answer.Placement != allocclient.PlacementRoom || g.token == "" {
			return RoomPlacement{}, sessions, fmt.Errorf("room games: placing %s: %d, placement %q, called back %v: %v",
				g.id, resp.StatusCode, answer.Placement, g.token != "", err)
		}
		took = append(took, d)
	}
	p := RoomPlacement{Phase: Phase{N: n, Elapsed: time.Since(start), Took: Summarize(took), Ops: ip.Counter.Take()}}
	p.derive(healthTable, fmt.Sprintf("room placement (%d)", n))
	return p, sessions, nil
}

// derive computes the figures per placement from the phase's operations.
func (p *RoomPlacement) derive(health, label string) {
	p.Rows = requestRows(label, p.Phase)
	use := func(keep func(OpKey) bool) dynamoUse { return dynamoPerCall(p.Ops, p.N, keep) }
	u := use(func(k OpKey) bool { return k.Table != health })
	p.Requests, p.ReadUnits, p.WriteUnits, p.IndexWrites = u.Requests, u.Reads, u.Writes, u.IndexWrites
	take := use(func(k OpKey) bool { return k.Operation == "TransactWriteItems" })
	p.Takes, p.TakeUnits, p.TakeIndexUnits = take.Requests, take.Writes, take.IndexWrites
	p.HealthReads = use(func(k OpKey) bool { return k.Table == health }).Requests
	p.DynamoDB = use(func(OpKey) bool { return true }).Took
	p.Rest = max(p.Took.Mean-p.DynamoDB, 0)
	p.BilledMs = math.Ceil(toMs(p.Took.Mean))
}

// measureServerBeats times the servers' all-sessions heartbeats at each
// endpoint's default interval, each an hour after the last on the rigs'
// clocks, so that every session's first beat there is due: as many at the
// HTTP API's interval as heartbeatsPerServer take at the function URL's
// (its servers beat faster; the reads before writing are what it adds).
func measureServerBeats(ctx context.Context, s *Stack, rig *linkBackRig, servers []game, linkedAt time.Time) (map[Endpoint]LifecycleCall, error) {
	api := newLinkBackRig(s, true, HTTPAPI, HTTPAPI.defaultEvery())
	defer api.Close()
	out := map[Endpoint]LifecycleCall{}
	for i, e := range []Endpoint{FunctionURL, HTTPAPI} {
		r := []*linkBackRig{rig, api}[i]
		beats := r.beats(linkedAt.Add(time.Duration(i+1)*time.Hour), heartbeatsPerServer*int(rig.every/r.every))
		c, err := r.calls(ctx, "heartbeat", servers, beats, fixed(`{"allSessions":true}`))
		if err != nil {
			return nil, err
		}
		c.Name = fmt.Sprintf("heartbeat for all %d sessions, %s every %s", RoomCapacity, e, r.every)
		out[e] = c
	}
	return out, nil
}

// GameCost is one game's bill per 1M games, item by item: its allocation,
// its game server's link-back calls and its lifecycle events, logs apart.
type GameCost struct {
	Allocation, Link, Heartbeats, End, Events float64
	Total                                     float64
}

func (g GameCost) summed() GameCost {
	g.Total = g.Allocation + g.Link + g.Heartbeats + g.End + g.Events
	return g
}

// RoomsAtEndpoint is a game's bill at one endpoint's default heartbeat
// interval, on a server of its own and on one holding Capacity rooms; Met
// is Shared.Total ≤ RoomsGoal, else MissedBy and Top, Shared's largest
// item. Game is the dedicated game's scenario; Beat the server's
// all-sessions heartbeat at the endpoint.
type RoomsAtEndpoint struct {
	Endpoint          Endpoint
	Every             time.Duration
	Capacity          int
	Dedicated, Shared GameCost
	SharedRatio       float64
	Met               bool
	MissedBy          float64
	Top               CostLine
	Game              *LifecycleScenario
	Beat              LifecycleCall
}

// DedicatedGame is a game on a server of its own as sc priced it.
func DedicatedGame(sc LifecycleScenario) GameCost {
	return GameCost{Allocation: sc.Allocation, Link: sc.Link.At(sc.Endpoint), End: sc.End.At(sc.Endpoint), Events: sc.Events,
		Heartbeats: sc.Heartbeats * sc.Heartbeat.At(sc.Endpoint)}.summed()
}

// SharedGame is one of the capacity games a server holds over its life,
// the server's own costs shared by them: the first game came with the
// server, allocated by the Allocator (allocation per 1M) and linking with
// the rooms offer, with a dedicated game's events; the other capacity−1
// were placed in its rooms (placement each), link as sessions and have
// roomEvents each; the server closes its rooms once before it stops.
// heartbeats is a game's share of its server's heartbeats; every game ends
// giving its room back; the link-back calls pay e's charge.
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
// duration and units as measured, and sc's amortised region-health reads
// and Secrets Manager calls. The session callback is inside the billed
// duration; it costs nothing else on AWS.
func RoomPlacementUSD(sc Scenario, in CostInputs, p RoomPlacement) float64 {
	return prices.HTTPAPI + invocationUSD(p.BilledMs) + dynamoUSD(p.ReadUnits, p.WriteUnits) + sc.amortised(in.HealthReadRRU)
}

// price fills in the per-game bills at each endpoint's default from the
// first cost scenario's allocation and the dedicated games as priced
// (l.price first).
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
		s := a.Shared
		a.Top = largest([]CostLine{{Item: "allocation", USD: s.Allocation}, {Item: "link", USD: s.Link}, {Item: "heartbeats", USD: s.Heartbeats},
			{Item: "end", USD: s.End}, {Item: "events", USD: s.Events}})
		a.Top.Share = a.Top.USD / s.Total
		r.ByEndpoint = append(r.ByEndpoint, a)
	}
	r.Goal = RoomsGoal
}
