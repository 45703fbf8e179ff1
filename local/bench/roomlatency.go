package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// RoomLatency compares POST /v1/allocations placed in a free room, through
// the local stack, with a direct call to the stand-in and with an
// allocation from the Allocator through the stack at the same moments.
// Failures are the calls that were not a 201 in a room / a direct 200 / a
// 201 from the Allocator; Ended the sessions ended (not timed) to free
// their rooms. Base is Allocator.P50 − Direct.P50, an allocation's own
// work and the local hops; Extra is Room.P50 − Base, what a placement does
// instead of the upstream call. Differences of medians, so approximate.
type RoomLatency struct {
	Servers, Capacity       int
	Room, Direct, Allocator Summary
	RatioP50, RatioP99      float64
	Met                     bool // Room.P50 < Direct.P50, the goal
	Failures                Counts
	Ended                   int
	Base, Extra             time.Duration
}

// roomServers offer rooms in the latency run: with RoomCapacity each, 6
// rooms for sessions, of which at most 5 are held before a placement.
const roomServers = 2

// MeasureRoomLatency makes roomServers game servers offer RoomCapacity
// rooms through the stack's API. Then, after o.Warmup, it takes turns: a
// fresh allocation, which must land in a room; a direct call to the
// stand-in; a fresh dedicated allocation through the stack, from the
// Allocator — so drift on the machine (DynamoDB Local's JIT) hits every
// series alike. The oldest session is ended between turns whenever one
// more would leave no room free, so the servers hold 1 to RoomCapacity
// games, as in play. At the end the servers close their rooms and every
// game ends, so that later allocations go to the Allocator again. o.Cap
// stays well under the servers' first heartbeat deadline (initial delay +
// 3 periods = 2 min), which they need not meet.
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
