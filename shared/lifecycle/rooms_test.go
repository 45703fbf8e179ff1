package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

const (
	roomHost    = "203.0.113.10"
	roomAddress = roomHost + ":7777"
	roomToken   = "room-callback-token-0123456789abcdef01234"
)

func allocated(id string, placement gameinstance.Placement, roomServer string) gameinstance.Record {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocated, Region: "us-west", Environment: "prod", ArmadaSet: "arena",
		Server:    &gameinstance.Server{Address: roomAddress, IP: roomHost, Ports: map[string]int{"game": 7777}},
		Placement: placement, RoomServer: roomServer, PartnerGameTokenHash: gameinstance.HashToken("tok-" + id), Version: 1,
		CreatedAt: at, UpdatedAt: at, HealthDeadline: at.Add(DefaultPolicy.LinkTimeout)}
}

func offer(capacity int, url string) *gameinstance.RoomOffer {
	return &gameinstance.RoomOffer{Capacity: capacity, CallbackURL: url, CallbackToken: roomToken}
}

func TestLinkOffersRooms(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 5, 0, time.UTC)
	cb := "http://" + roomHost + ":7600/sessions"
	tests := []struct {
		name     string
		rec      gameinstance.Record
		offer    *gameinstance.RoomOffer
		wantErr  string // in the INVALID_REQUEST message
		capacity int
	}{
		{name: "first link offers 4", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: offer(4, cb), capacity: 4},
		{name: "capacity 1 holds its own room", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: &gameinstance.RoomOffer{Capacity: 1}, capacity: 1},
		{name: "a room placed session re-offers", rec: allocated("gi-2", gameinstance.PlacementRoom, roomAddress), offer: offer(4, cb), capacity: 4},
		{name: "hostname in any case", rec: func() gameinstance.Record {
			r := allocated("gi-1", gameinstance.PlacementAllocator, "")
			r.Server = &gameinstance.Server{Address: "GS-1.example:7777"}
			return r
		}(), offer: offer(2, "https://gs-1.EXAMPLE:9/s?x=1"), capacity: 2},
		{name: "IPv6 by value", rec: func() gameinstance.Record {
			r := allocated("gi-1", gameinstance.PlacementAllocator, "")
			r.Server = &gameinstance.Server{Address: "[2001:db8::1]:7777", IP: "2001:db8::1"}
			return r
		}(), offer: offer(2, "http://[2001:db8:0::1]:7600/"), capacity: 2},
		{name: "another host", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: offer(4, "http://169.254.169.254/latest"),
			wantErr: "rooms.callbackUrl must lead to the host GameFabric allocated for this game instance (203.0.113.10)"},
		{name: "another scheme", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: offer(4, "file://"+roomHost+"/x"), wantErr: "rooms.callbackUrl must be an absolute http"},
		{name: "credentials in the URL", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: offer(4, "http://u:p@"+roomHost+"/x"), wantErr: "must not carry credentials"},
		{name: "capacity out of range", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: offer(257, cb), wantErr: "rooms.capacity must be 0-256"},
		{name: "negative capacity", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: offer(-1, cb), wantErr: "rooms.capacity must be 0-256"},
		{name: "no callback for more rooms", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: &gameinstance.RoomOffer{Capacity: 2},
			wantErr: "rooms.callbackToken is required"},
		{name: "short token", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""),
			offer: &gameinstance.RoomOffer{Capacity: 2, CallbackURL: cb, CallbackToken: "short"}, wantErr: "rooms.callbackToken must be 32-1024"},
		{name: "capacity 0 without a room", rec: allocated("gi-1", gameinstance.PlacementAllocator, ""), offer: &gameinstance.RoomOffer{}, wantErr: "rooms.capacity 0"},
		{name: "recovered by its link", rec: func() gameinstance.Record {
			r := allocated("gi-1", gameinstance.PlacementAllocator, "")
			r.RecoveredByLink = true
			return r
		}(), offer: offer(4, cb), wantErr: "recovered by its link"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeStore(1)
			f.recs[tc.rec.GameInstanceID] = tc.rec
			if tc.rec.Placement == gameinstance.PlacementRoom {
				f.servers = map[string]*fakeServer{roomAddress: {capacity: 4, sessions: map[string]bool{tc.rec.GameInstanceID: true}, accepting: true}}
			}
			svc := &Service{Store: f, Policy: DefaultPolicy, Now: func() time.Time { return now }, Rooms: true}
			got, err := svc.Link(context.Background(), tc.rec.GameInstanceID, "tok-"+tc.rec.GameInstanceID, nil, tc.offer)
			if tc.wantErr != "" {
				if gameinstance.CodeOf(err) != gameinstance.CodeInvalidRequest || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want INVALID_REQUEST with %q", err, tc.wantErr)
				}
				if after := f.recs[tc.rec.GameInstanceID]; after.State != gameinstance.StateAllocated || after.Version != 1 {
					t.Errorf("the refused link was stored: %s v%d", after.State, after.Version)
				}
				if tc.rec.Placement != gameinstance.PlacementRoom && len(f.servers) > 0 {
					t.Errorf("the refused offer left a game server record")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.State != gameinstance.StateLinked || got.RoomServer != tc.rec.Server.Address || f.recs[tc.rec.GameInstanceID].RoomServer != got.RoomServer {
				t.Fatalf("linked %s, room server %q", got.State, got.RoomServer)
			}
			gs := f.server(tc.rec.Server.Address)
			if gs == nil || !gs.sessions[tc.rec.GameInstanceID] || gs.capacity != tc.capacity || !gs.accepting {
				t.Fatalf("game server record = %+v", gs)
			}
		})
	}
}

// A link again with the same offer changes nothing; another capacity
// changes it; 0 closes it while the rooms in use stay; a later offer
// reopens it.
func TestRelinkChangesTheOffer(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 5, 0, time.UTC)
	f := newFakeStore(1)
	f.recs["gi-1"] = allocated("gi-1", gameinstance.PlacementAllocator, "")
	svc := &Service{Store: f, Policy: DefaultPolicy, Now: func() time.Time { return now }, Rooms: true}
	link := func(o *gameinstance.RoomOffer) gameinstance.Record {
		t.Helper()
		rec, err := svc.Link(context.Background(), "gi-1", "tok-gi-1", nil, o)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	cb := "http://" + roomHost + ":7600/sessions"
	first := link(offer(4, cb))
	if again := link(offer(4, cb)); again.Version != first.Version {
		t.Errorf("the same offer rewrote the instance: v%d -> v%d", first.Version, again.Version)
	}
	link(offer(8, cb))
	if gs := f.server(roomAddress); gs.capacity != 8 || len(gs.sessions) != 1 {
		t.Fatalf("after capacity 8: %+v", gs)
	}
	// Never over capacity: with two rooms in use, capacity 1 is refused
	// and changes nothing.
	f.servers[roomAddress].sessions["gi-9"] = true
	if _, err := svc.Link(context.Background(), "gi-1", "tok-gi-1", nil, offer(1, cb)); gameinstance.CodeOf(err) != gameinstance.CodeInvalidRequest ||
		!strings.Contains(err.Error(), "rooms.capacity 1 is below the 2 game instances") {
		t.Fatalf("capacity below the rooms in use: %v", err)
	}
	if gs := f.server(roomAddress); gs.capacity != 8 {
		t.Fatalf("a refused capacity changed it to %d", gs.capacity)
	}
	delete(f.servers[roomAddress].sessions, "gi-9")
	link(&gameinstance.RoomOffer{})
	if gs := f.server(roomAddress); gs.accepting || gs.reason != gameinstance.ClosedByServer || !gs.sessions["gi-1"] {
		t.Fatalf("after capacity 0: %+v", gs)
	}
	link(offer(4, cb))
	if gs := f.server(roomAddress); !gs.accepting || gs.capacity != 4 || len(gs.sessions) != 1 {
		t.Fatalf("reopened: %+v", gs)
	}
	if link(nil).RoomServer != roomAddress {
		t.Error("a link without rooms dropped the room")
	}
}

// A room comes back exactly once, whichever way the instance leaves a live
// state, and a session gone Unhealthy closes its server.
func TestRoomsComeBackOnce(t *testing.T) {
	now := time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC)
	linked := allocated("gi-2", gameinstance.PlacementRoom, roomAddress)
	linked.State, linked.LinkedAt, linked.LastHeartbeatAt = gameinstance.StateLinked, now.Add(-time.Hour), now.Add(-time.Hour)
	tests := []struct {
		name      string
		rec       gameinstance.Record
		do        func(*Service) error
		wantState gameinstance.State
		closed    bool
	}{
		{"end", linked, func(s *Service) error { _, err := s.End(context.Background(), "gi-2", "tok-gi-2", "IWON"); return err },
			gameinstance.StateEnded, false},
		{"end by backend", linked, func(s *Service) error { _, err := s.EndByBackend(context.Background(), "gi-2"); return err },
			gameinstance.StateEnded, false},
		{"missed heartbeats", linked, func(s *Service) error { _, _, err := s.review(context.Background(), "gi-2"); return err },
			gameinstance.StateUnhealthy, true},
		{"never linked", allocated("gi-2", gameinstance.PlacementRoom, roomAddress),
			func(s *Service) error { _, _, err := s.review(context.Background(), "gi-2"); return err }, gameinstance.StateUnhealthy, true},
		{"in-doubt claim failed", func() gameinstance.Record {
			r := allocated("gi-2", gameinstance.PlacementRoom, roomAddress)
			r.State, r.Server, r.Placement, r.LeaseExpiresAt = gameinstance.StateAllocating, nil, "", now.Add(-time.Hour)
			return r
		}(), func(s *Service) error { _, _, err := s.review(context.Background(), "gi-2"); return err }, gameinstance.StateFailed, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeStore(1)
			f.recs["gi-2"] = tc.rec
			f.servers = map[string]*fakeServer{roomAddress: {capacity: 4, accepting: true, sessions: map[string]bool{"gi-1": true, "gi-2": true}}}
			svc := &Service{Store: f, Policy: DefaultPolicy, Now: func() time.Time { return now }, Rooms: true}
			for range 2 { // the second time changes nothing
				if err := tc.do(svc); err != nil {
					t.Fatal(err)
				}
			}
			gs := f.server(roomAddress)
			if f.recs["gi-2"].State != tc.wantState || f.released != 1 || gs.sessions["gi-2"] || !gs.sessions["gi-1"] {
				t.Fatalf("state %s, %d released, sessions %v", f.recs["gi-2"].State, f.released, gs.sessions)
			}
			if gs.accepting == tc.closed || (tc.closed && gs.reason != gameinstance.ClosedSessionUnhealthy) {
				t.Errorf("accepting %v (%s), want closed %v", gs.accepting, gs.reason, tc.closed)
			}
		})
	}
}

func TestOffersNeedRooms(t *testing.T) {
	f := newFakeStore(1)
	f.recs["gi-1"] = allocated("gi-1", gameinstance.PlacementAllocator, "")
	svc := &Service{Store: f, Policy: DefaultPolicy}
	_, err := svc.Link(context.Background(), "gi-1", "tok-gi-1", nil, offer(4, "http://"+roomHost+"/s"))
	if gameinstance.CodeOf(err) != gameinstance.CodeInvalidRequest || !strings.Contains(err.Error(), "GAME_SERVERS_TABLE") {
		t.Fatalf("err = %v", err)
	}
}
