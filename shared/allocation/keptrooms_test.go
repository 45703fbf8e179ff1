package allocation

import (
	"context"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// agonesUpstreams serves every region from an Agones-kind Allocator that
// keeps its rooms itself (a rooms Counter).
type agonesUpstreams struct {
	alloc  Allocator
	tokens Tokens
}

func (a agonesUpstreams) For(region string) Upstream {
	return Upstream{ID: "agones", Region: region, Kind: apishape.AllocatorAgones, Credential: CredentialTLS, KeepsRooms: true,
		Allocator: a.alloc, Tokens: a.tokens}
}

// countingRooms is a room pool that never has a room and counts the asks.
type countingRooms struct{ asked int }

func (c *countingRooms) Place(context.Context, RoomRequest) RoomResult {
	c.asked++
	return RoomResult{}
}

// An Allocator that keeps rooms is asked instead of the room pool, is told
// the request's scheduling and whether it is dedicated, and its room answer
// is the record's placement (with no room-pool record to give back) and its
// game server's names are the attempt's.
func TestAllocatorKeptRooms(t *testing.T) {
	for _, tc := range []struct {
		name          string
		answer        error
		dedicated     bool
		wantPlacement gameinstance.Placement
	}{
		{"a room on a server hosting others", agonesRoom, false, gameinstance.PlacementRoom},
		{"a server of its own", nil, true, gameinstance.PlacementAllocator},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &script{queue: map[string][]error{"us-west": {tc.answer}}}
			svc, _ := newTestService(alloc)
			pool := &countingRooms{}
			svc.o.Rooms, svc.o.Upstreams = pool, agonesUpstreams{alloc: alloc, tokens: svc.o.Tokens}
			res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-r", DesiredRegion: "us-west",
				Scheduling: "Distributed", Dedicated: tc.dedicated})
			if err != nil {
				t.Fatal(err)
			}
			rec := res.Record
			if pool.asked != 0 || rec.Placement != tc.wantPlacement || rec.RoomServer != "" || rec.HoldsRoom() {
				t.Fatalf("pool asked %d times, placement %q, room server %q", pool.asked, rec.Placement, rec.RoomServer)
			}
			if alloc.last.Scheduling != gameinstance.SchedulingDistributed || alloc.last.Dedicated != tc.dedicated {
				t.Fatalf("upstream request = %+v", alloc.last)
			}
			a := rec.Attempts[0]
			if a.AllocatorKind != apishape.AllocatorAgones || (tc.answer == agonesRoom) != (a.GameServerName == "fleet-abc12" && a.NodeName == "node-1") {
				t.Fatalf("attempt = %+v", a)
			}
		})
	}
}
