package allocation

import (
	"context"
	"errors"
	"fmt"
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

// An Agones allocator asked whose answer never came (a timeout, a reset)
// may have allocated a server that holds the step's token, and Agones
// keeps no record to ask: the plan stops there and the claim stays in
// doubt, so neither a fallback region nor a retry allocates a second
// server. A lost GameFabric answer still moves on (faults_test.go).
func TestAgonesAnswerLostLeavesTheClaimInDoubt(t *testing.T) {
	reset := &UpstreamError{Kind: UpstreamTransport, Message: "connection reset by peer", MayHaveAllocated: true}
	for name, lost := range map[string]error{"timeout": timeout, "reset": reset} {
		t.Run(name, func(t *testing.T) {
			alloc := &script{queue: map[string][]error{"us-west": {lost}, "eu": {nil}}}
			svc, store := newTestService(alloc)
			health := &fakeHealth{}
			svc.o.Upstreams, svc.o.Health = agonesUpstreams{alloc: alloc, tokens: svc.o.Tokens}, health
			_, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-l", PreferredRegions: []string{"us-west", "eu"}})
			var e *gameinstance.Error
			if !errors.As(err, &e) || e.Code != gameinstance.CodeUnavailable || len(e.Attempts) != 1 || !e.Attempts[0].SuspectedOrphan {
				t.Fatalf("err = %v, want SERVICE_UNAVAILABLE with the lost attempt", err)
			}
			rec := store.records["gi-l"]
			if len(alloc.calls) != 1 || rec.State != gameinstance.StateAllocating || len(rec.CandidateTokenHashes) == 0 {
				t.Fatalf("calls %v, record %s with %d candidate hashes: want one call and a claim in doubt", alloc.calls, rec.State, len(rec.CandidateTokenHashes))
			}
			if fmt.Sprint(health.observed) != "[us-west:false]" {
				t.Fatalf("region health observed %v, want the region's fault", health.observed)
			}
		})
	}
}
