package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// RoomLatency compares allocations placed in a free room through the stack
// with direct calls to the stand-in and allocations from the Allocator.
// Base (Allocator − Direct) and Extra (Room − Base) are differences of
// medians, so approximate.
type RoomLatency struct {
	Servers, Capacity       int
	Room, Direct, Allocator Summary
	RatioP50, RatioP99      float64
	Met                     bool // Room.P50 < Direct.P50, the goal
	Failures                Counts
	Ended                   int
	Base, Extra             time.Duration
}

// roomServers offer rooms in the latency run: 6 rooms for sessions, of
// which at most 5 are held before a placement.
const roomServers = 2

// MeasureRoomLatency makes roomServers servers offer RoomCapacity rooms,
// then takes turns (a fresh allocation that must land in a room, a direct
// call, a dedicated allocation) so that drift hits every series alike,
// ending the oldest session whenever one more would leave no room free.
// o.Cap stays under the servers' first heartbeat deadline (2 min).
func MeasureRoomLatency(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer) (res RoomLatency, err error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	client := newAPIClient(s.APIURL, 4)
	run := runID()
	res = RoomLatency{Servers: roomServers, Capacity: RoomCapacity, Failures: Counts{}}
	var live []string // sessions in rooms, oldest first
	hosts, err := openRooms(ctx, client, roomServers, "rmh-"+run)
	defer func() { err = errors.Join(err, shutRooms(ctx, client, s.GameServerURL, hosts, &live)) }()
	if err != nil {
		return res, err
	}
	for _, h := range hosts {
		if err := h.link(ctx, s.GameServerURL, RoomCapacity); err != nil {
			return res, fmt.Errorf("room latency: game server %s offering rooms: %w", h.id, err)
		}
		h.linked = true
	}
	var room, direct, allocator []time.Duration
	for i := 0; i < o.Warmup+o.N && ctx.Err() == nil; i++ {
		id := fmt.Sprintf("rm-%s-%d", run, i)
		r := postAllocation(ctx, client, id, RegionOK)
		d, derr := s.StandIn.Direct(ctx, RegionOK, id+"-direct")
		dedicated := allocateRequest(id+"-alloc", RegionOK)
		dedicated.Dedicated = true
		a := postRequest(ctx, client, dedicated)
		if r.Status == http.StatusCreated {
			live = append(live, id) // a server from the Allocator too: ended all the same
		}
		if i >= o.Warmup {
			switch {
			case r.Status == http.StatusCreated && r.Body.Placement == allocclient.PlacementRoom:
				room = append(room, r.Took)
			case r.Status == http.StatusCreated:
				res.Failures["stack: 201 placed by "+string(r.Body.Placement)]++
			default:
				res.Failures["stack: "+r.Outcome()]++
			}
			direct = res.Failures.keep(direct, d, derr, "direct: ")
			if a.Status == http.StatusCreated && a.Body.Placement == allocclient.PlacementAllocator {
				allocator = append(allocator, a.Took)
			} else {
				res.Failures["allocator: "+a.Outcome()]++
			}
		}
		for len(live) > roomServers*(RoomCapacity-1)-1 {
			if err := endAll(ctx, client, live[:1]); err != nil {
				return res, fmt.Errorf("room latency: freeing a room: %w", err)
			}
			live, res.Ended = live[1:], res.Ended+1
		}
	}
	if len(room) == 0 || len(direct) == 0 || len(allocator) == 0 {
		return res, fmt.Errorf("room latency: no successful calls (%s); see %s", res.Failures, s.LogPath())
	}
	res.Room, res.Direct, res.Allocator = Summarize(room), Summarize(direct), Summarize(allocator)
	res.RatioP50, res.RatioP99 = durRatio(res.Room.P50, res.Direct.P50), durRatio(res.Room.P99, res.Direct.P99)
	res.Met = res.Room.P50 < res.Direct.P50
	res.Base = res.Allocator.P50 - res.Direct.P50
	res.Extra = res.Room.P50 - res.Base
	progress(log, "room placement: stack p50 %s p99 %s, direct p50 %s p99 %s, from the Allocator through the stack p50 %s (n=%d, %d sessions ended between turns)",
		fmtMs(res.Room.P50), fmtMs(res.Room.P99), fmtMs(res.Direct.P50), fmtMs(res.Direct.P99), fmtMs(res.Allocator.P50), res.Room.N, res.Ended)
	return res, nil
}

// RoomCapacity is the rooms each bench server offers, as local/dev.yaml's
// us-west servers do.
const RoomCapacity = 4

const maxKeptSessions = 1024

// roomHost is a game server offering rooms: the SDK's session callback on
// loopback, keeping each session's PartnerGameToken for its link-back calls.
type roomHost struct {
	game
	callback              *gameserver.SessionCallback
	srv                   *httptest.Server
	drained               chan struct{}
	linked, closed, ended bool

	mu       sync.Mutex
	sessions map[string]string // session id → its PartnerGameToken
}

// openRooms starts n game servers, each allocated through the stack as
// prefix-i, dedicated (a whole server from the stand-in, never a room on
// another). It returns those started so far on a failure too.
func openRooms(ctx context.Context, client *allocclient.Client, n int, prefix string) ([]*roomHost, error) {
	var hosts []*roomHost
	for i := range n {
		cb, err := gameserver.NewSessionCallback(gameserver.SessionCallbackOptions{Logger: logging.New(io.Discard, 0)})
		if err != nil {
			return hosts, err
		}
		h := &roomHost{game: game{id: fmt.Sprintf("%s-%d", prefix, i), token: gameserver.NewCallbackToken()},
			callback: cb, srv: httptest.NewServer(cb), drained: make(chan struct{}), sessions: map[string]string{}}
		hosts = append(hosts, h)
		// Taken at once, so no callback waits or is refused for a full buffer.
		go func() {
			defer close(h.drained)
			for p := range cb.Sessions() {
				h.mu.Lock()
				if len(h.sessions) < maxKeptSessions {
					h.sessions[p.GameInstanceID] = p.PartnerGameToken
				}
				h.mu.Unlock()
			}
		}()
		a, err := client.Allocate(ctx, allocclient.AllocateRequest{GameInstanceID: h.id, DesiredRegion: RegionOK, GameServerVersion: Version,
			ServerArgs: "-map=arena", PartnerGameToken: h.token, Dedicated: true})
		switch {
		case err != nil:
			return hosts, fmt.Errorf("allocate game server %s: %w", h.id, err)
		case !a.Created || a.Server == nil || a.Placement != allocclient.PlacementAllocator:
			return hosts, fmt.Errorf("allocate game server %s: not a fresh server from the Allocator (%s, placement %q)", h.id, a.State, a.Placement)
		}
	}
	return hosts, nil
}

func (h *roomHost) sessionToken(id string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.sessions[id]
	return t, ok
}

// offer is the link body offering capacity rooms (0 closes them). It
// carries the callback token: never print it.
func (h *roomHost) offer(capacity int) string {
	b, _ := json.Marshal(gameserver.LinkRequest{Rooms: h.callback.Offer(h.srv.URL+"/sessions", capacity)})
	return string(b)
}

func (h *roomHost) link(ctx context.Context, base string, capacity int) error {
	_, err := linkBackCall(ctx, base, h.id, "link", h.token, h.offer(capacity))
	return err
}

func endAll(ctx context.Context, c *allocclient.Client, ids []string) error {
	var errs []error
	for _, id := range ids {
		a, err := c.End(ctx, id)
		if err == nil && a.State != "Ended" {
			err = fmt.Errorf("state %s", a.State)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("end %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// shutRooms closes the open servers' rooms, ends every game not ended and
// stops the callbacks, also after a failure, on its own time: a server left
// open would take later phases' allocations.
func shutRooms(ctx context.Context, client *allocclient.Client, gameServerURL string, hosts []*roomHost, sessions *[]string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []error
	ids := *sessions
	for _, h := range hosts {
		if h.linked && !h.closed {
			if err := h.link(ctx, gameServerURL, 0); err != nil {
				errs = append(errs, fmt.Errorf("closing the rooms of %s: %w", h.id, err))
			}
		}
		if !h.ended {
			ids = append(ids, h.id)
		}
	}
	errs = append(errs, endAll(ctx, client, ids))
	*sessions = nil
	for _, h := range hosts {
		h.callback.Stop()
		h.srv.Close()
		<-h.drained
	}
	return errors.Join(errs...)
}
