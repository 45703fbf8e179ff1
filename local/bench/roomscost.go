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

// heartbeatsPerServer: the room sessions' heartbeats (per-call figures
// only). Issue 35's goal for a game on a server holding RoomCapacity rooms
// is a whole life below a dedicated game's.
const heartbeatsPerServer = 5

// RoomsResult is issue 22's figures.
type RoomsResult struct {
	Latency      RoomLatency
	Games        RoomGames
	Events       EventsResult
	PlacementUSD float64
	ByEndpoint   []RoomsAtEndpoint
}

// RoomGames is what the games of servers holding RoomCapacity rooms cost.
type RoomGames struct {
	Servers, Heartbeats                       int
	Placement                                 RoomPlacement
	Offer, SessionLink, Heartbeat, Close, End LifecycleCall
	ServerBeat                                map[Endpoint]LifecycleCall
	IDPrefix                                  string
}

// RoomPlacement is placing a session in a free room, per placement
// (region-health reads apart, amortised as an allocation's).
type RoomPlacement struct {
	Phase
	Rows                                         []RequestRow
	Requests, ReadUnits, WriteUnits, IndexWrites float64
	Takes, TakeUnits, TakeIndexUnits             float64
	HealthReads                                  float64
	DynamoDB, Rest                               time.Duration
	BilledMs                                     float64
}

// MeasureRoomGames plays the games of n servers offering rooms: every call
// but the servers' allocations counted.
func MeasureRoomGames(ctx context.Context, s *Stack, n int, log io.Writer) (res RoomGames, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ip, err := NewInProcess(s, nil)
	if err != nil {
		return res, err
	}
	rig := newLinkBackRig(s, true, FunctionURL, FunctionURL.defaultEvery())
	defer rig.Close()
	client := newAPIClient(s.APIURL, 4)
	run := runID()
	res = RoomGames{Servers: n, Heartbeats: heartbeatsPerServer, IDPrefix: "rms-" + run + "-"}
	// The first call fetches the token and reads region health: before any
	// room is offered, so from the Allocator.
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

// placeSessions allocates n sessions in process, each into a room of hosts.
// It returns those placed so far on a failure too.
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
// endpoint's default interval, an hour apart so every first beat is due,
// as many as fit in heartbeatsPerServer at the function URL's.
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

// GameCost is one game's bill per 1M games, logs apart; Sweep is the
// health sweep's reads.
type GameCost struct {
	Allocation, Link, Heartbeats, End, Events, Sweep float64
	Total                                            float64
}

func (g GameCost) summed() GameCost {
	g.Total = g.Allocation + g.Link + g.Heartbeats + g.End + g.Events + g.Sweep
	return g
}

// RoomsAtEndpoint is a game's bill at an endpoint's default interval, on a
// server of its own and on one holding Capacity rooms.
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
		Heartbeats: sc.Heartbeats * sc.Heartbeat.At(sc.Endpoint), Sweep: sc.Sweep}.summed()
}

// SharedGame is one of the capacity games a server holds: the first came
// with the server, the others were placed in its rooms; they share the
// server's link, close and heartbeats. The sweep reads each game's record
// as a dedicated game's (sweep).
func SharedGame(capacity int, e Endpoint, allocation, placement, heartbeats, sweep float64, g RoomGames, dedicatedEvents, roomEvents float64) GameCost {
	c := float64(max(capacity, 1))
	others := c - 1
	return GameCost{
		Allocation: (allocation + others*placement) / c,
		Link:       (g.Offer.At(e) + others*g.SessionLink.At(e) + g.Close.At(e)) / c,
		End:        g.End.At(e),
		Events:     (dedicatedEvents + others*roomEvents) / c,
		Heartbeats: heartbeats,
		Sweep:      sweep,
	}.summed()
}

// RoomPlacementUSD prices a room placement as sc prices an allocation.
// The session callback is in the billed duration; it costs nothing else.
func RoomPlacementUSD(sc Scenario, in CostInputs, p RoomPlacement) float64 {
	return prices.HTTPAPI + invocationUSD(p.BilledMs) + dynamoUSD(p.ReadUnits, p.WriteUnits) + sc.amortised(in.HealthReadRRU)
}

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
		// The server beats as often as a dedicated game's, renewing all its games.
		beats := d.Heartbeats * a.Beat.At(e) / RoomCapacity
		a.Shared = SharedGame(RoomCapacity, e, sc.Total, r.PlacementUSD, beats, d.Sweep, r.Games, dedicatedEvents, r.Events.PerGame)
		a.SharedRatio = a.Shared.Total / a.Dedicated.Total
		a.Met, a.MissedBy = a.Shared.Total < a.Dedicated.Total, math.Max(0, a.Shared.Total-a.Dedicated.Total)
		s := a.Shared
		a.Top = largest([]CostLine{{Item: "allocation", USD: s.Allocation}, {Item: "link", USD: s.Link}, {Item: "heartbeats", USD: s.Heartbeats},
			{Item: "end", USD: s.End}, {Item: "events", USD: s.Events}})
		a.Top.Share = a.Top.USD / s.Total
		r.ByEndpoint = append(r.ByEndpoint, a)
	}
}
