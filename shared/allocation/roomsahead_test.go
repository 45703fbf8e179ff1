package allocation

import (
	"context"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// listingRooms lists ahead (RoomLister) and places nothing; it records
// what Place was handed.
type listingRooms struct {
	listed  chan gameinstance.RoomPool // each ListRooms call's pool
	gotList []RoomListing
	places  int
}

func (r *listingRooms) ListRooms(_ context.Context, pool gameinstance.RoomPool, _ gameinstance.Scheduling) RoomListing {
	r.listed <- pool
	return RoomListing{Servers: []gameinstance.GameServer{{Address: "10.0.0.9:7777"}}}
}

func (r *listingRooms) Place(_ context.Context, req RoomRequest) RoomResult {
	r.places++
	if req.Listed != nil {
		r.gotList = append(r.gotList, <-req.Listed)
	}
	return RoomResult{}
}

// claimAfterListing claims only once the room listing has started: the
// two overlap, or the claim times out.
type claimAfterListing struct {
	*memStore
	rooms *listingRooms
	seen  []gameinstance.RoomPool
}

func (c *claimAfterListing) Claim(ctx context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error) {
	select {
	case pool := <-c.rooms.listed:
		c.seen = append(c.seen, pool)
	case <-time.After(5 * time.Second):
		return gameinstance.Record{}, context.DeadlineExceeded
	}
	return c.memStore.Claim(ctx, rec, takeoverBefore)
}

// The first region's free rooms are listed while the claim is written,
// and Place reads that listing instead of listing again; later regions
// and dedicated requests list nothing ahead.
func TestAllocateListsRoomsWhileClaiming(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {status(503, 0)}, "eu": {nil}}}
	svc, store := newTestService(alloc)
	rooms := &listingRooms{listed: make(chan gameinstance.RoomPool, 1)}
	claims := &claimAfterListing{memStore: store, rooms: rooms}
	svc.o.Rooms, svc.o.Store = rooms, claims
	res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-1", DesiredRegion: "us-west"})
	if err != nil || res.Record.Region != "eu" {
		t.Fatalf("Allocate = %+v, %v", res, err)
	}
	want := gameinstance.RoomPool{Region: "us-west", Environment: "prag", ArmadaSet: "fleet"}
	if len(claims.seen) != 1 || claims.seen[0] != want {
		t.Fatalf("listed ahead %v, want the first region's pool %v", claims.seen, want)
	}
	if rooms.places != 2 || len(rooms.gotList) != 1 || rooms.gotList[0].Servers[0].Address != "10.0.0.9:7777" {
		t.Fatalf("Place called %d times, handed %v: want the listing for the first region only", rooms.places, rooms.gotList)
	}
	if l := svc.listRoomsAhead(context.Background(), Spec{Plan: []PlanStep{{Region: "us-west"}}, Fingerprint: gameinstance.Fingerprint{Dedicated: true}},
		[][]string{{"a", "b", "c"}}); l != nil {
		t.Fatal("a dedicated request listed rooms ahead")
	}
}

// placingRooms places every instance on one server (a take and a callback).
type placingRooms struct{}

func (placingRooms) Place(_ context.Context, req RoomRequest) RoomResult {
	return RoomResult{Server: &gameinstance.Server{Address: "10.0.0.9:7777"}, Address: "10.0.0.9:7777",
		Attempts: []gameinstance.Attempt{{Region: req.Pool.Region, Status: 200, Placement: gameinstance.PlacementRoom, Server: "10.0.0.9:7777"}}}
}

// versionedStore stores claims at version 4, as if over an older record,
// and notes the version each outcome is written with.
type versionedStore struct {
	*memStore
	finished []int64
}

func (v *versionedStore) Claim(ctx context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error) {
	stored, err := v.memStore.Claim(ctx, rec, takeoverBefore)
	stored.Version = 4
	return stored, err
}

func (v *versionedStore) Finish(ctx context.Context, rec gameinstance.Record) (gameinstance.Record, error) {
	v.finished = append(v.finished, rec.Version)
	return v.memStore.Finish(ctx, rec)
}

// The outcome goes out with the claim's stored version, so the store need
// not read it back; unless a room was taken for it, which wrote the record
// and moved its version on: then 0, read it back.
func TestOutcomeCarriesTheClaimsVersionUnlessARoomMovedIt(t *testing.T) {
	for _, rooms := range []Rooms{nil, placingRooms{}} {
		alloc := &script{queue: map[string][]error{"us-west": {nil}}}
		svc, store := newTestService(alloc)
		vs := &versionedStore{memStore: store}
		svc.o.Store, svc.o.Rooms = vs, rooms
		if _, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-1", DesiredRegion: "us-west"}); err != nil {
			t.Fatal(err)
		}
		want := int64(4)
		if rooms != nil {
			want = 0
		}
		if len(vs.finished) != 1 || vs.finished[0] != want {
			t.Errorf("rooms %T: outcome written with versions %v, want [%d]", rooms, vs.finished, want)
		}
	}
}
