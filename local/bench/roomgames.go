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
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	res = RoomGames{Servers: n, Heartbeats: heartbeatsPerServer, IDPrefix: "rms-" + run + "-"}

	// The handler's first call fetches the Allocator's token and reads
	// region health: done before any room is offered, so it is a server
	// from the Allocator, ended at once.
	warm := "rmw-" + run
	if status, _, err := ip.Allocate(ctx, warm, RegionOK); err != nil || status != http.StatusCreated {
		return res, fmt.Errorf("room games: warm-up allocation: %d %v", status, err)
	}
	if err := endAll(ctx, client, []string{warm}); err != nil {
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
