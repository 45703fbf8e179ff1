//go:build integration

package tests

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Rooms on the real components: a game server offers rooms when it links,
// allocations take its free rooms (one callback each) before GameFabric's
// Allocator, and every session that ends gives its room back.
func TestRoomsShareAGameServer(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.stub.Always("us-west", gfemu.Answer{})
	cb := newSessionServer(t)

	first := e.allocate(t, `{"gameInstanceId":"gi-1","desiredRegion":"us-west","partnerGameToken":"`+tokenFor("gi-1")+`"}`).expect(t, http.StatusCreated, "")
	if p, _ := placement(first); p != "allocator" {
		t.Fatalf("the first instance's placement = %q, want allocator", p)
	}
	addr := serverAddress(first)
	noTokens(t, e.linkRooms(t, "gi-1", 3, cb).expect(t, http.StatusOK, "").Raw)
	gs := e.gameServer(t, addr)
	if gs.Capacity != 3 || gs.InUse != 1 || !gs.Accepting || gs.Region != "us-west" || gs.Environment != "prag" || gs.ArmadaSet != "sample-game-armada-set" ||
		gs.CallbackURL != cb.URL() || gs.CallbackToken != roomToken {
		t.Fatalf("game server record = %#v (%s)", gs, gs.CallbackURL)
	}

	// A room: the shared server, found without GameFabric.
	second := e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
	p, called := placement(second)
	if p != "room" || !reflect.DeepEqual(called, []string{addr}) || !reflect.DeepEqual(second.Body["server"], first.Body["server"]) {
		t.Fatalf("placement %q on %v, server %v; want a room on %s (%v)", p, called, second.Body["server"], addr, first.Body["server"])
	}
	if a := second.attempts()[0]; a["status"] != float64(200) || a["region"] != "us-west" || a["reason"] != "requested" {
		t.Fatalf("room attempt = %v", a)
	}
	if n := len(e.stub.Allocations()); n != 1 {
		t.Fatalf("%d upstream allocations, want 1", n)
	}
	session := cb.payloadOf(t, "gi-2")
	if cb.authorization(0) != "Bearer "+roomToken || len(session.PartnerGameToken) < 43 || session.PragmaBackendAddress != "http://127.0.0.1:10100" {
		t.Fatalf("callback %q with %+v", cb.authorization(0), session)
	}
	e.linkAsSession(t, session).expect(t, http.StatusOK, "")
	noTokens(t, second.Raw)

	// A replay answers the record; it calls nobody.
	if again := e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusOK, ""); again.Body["placement"] != "room" || len(cb.sessions()) != 1 {
		t.Fatalf("replay: %s, %d callbacks", again.Raw, len(cb.sessions()))
	}
	// Another scheduling is another request.
	e.allocateIn(t, "gi-2", "us-west", `,"scheduling":"Distributed"`).expect(t, http.StatusConflict, "IDEMPOTENCY_MISMATCH")

	// The last room, then the Allocator.
	if p, _ := placement(e.allocateIn(t, "gi-3", "us-west", "").expect(t, http.StatusCreated, "")); p != "room" {
		t.Fatalf("gi-3: placement %q, want room", p)
	}
	if full := e.allocateIn(t, "gi-4", "us-west", "").expect(t, http.StatusCreated, ""); full.Body["placement"] != "allocator" || len(full.attempts()) != 1 {
		t.Fatalf("a full server: %s", full.Raw)
	}
	if gs := e.gameServer(t, addr); gs.InUse != 3 {
		t.Fatalf("%d rooms in use, want 3", gs.InUse)
	}

	// An end gives its room back; a dedicated request never takes it.
	e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-2/end", "Bearer "+session.PartnerGameToken, `{"reason":"IWON"}`).expect(t, http.StatusOK, "")
	if p, _ := placement(e.allocateIn(t, "gi-5", "us-west", `,"dedicated":true`).expect(t, http.StatusCreated, "")); p != "allocator" {
		t.Fatalf("dedicated: placement %q", p)
	}
	if p, _ := placement(e.allocateIn(t, "gi-6", "us-west", "").expect(t, http.StatusCreated, "")); p != "room" {
		t.Fatalf("gi-6 after an end: placement %q, want the freed room", p)
	}
	// Never over capacity: the server hosts 3, so it cannot offer 2.
	if r := e.linkRooms(t, "gi-1", 2, cb).expect(t, http.StatusBadRequest, "INVALID_REQUEST"); !strings.Contains(r.Raw, "rooms.capacity 2 is below the 3") {
		t.Fatalf("capacity below the rooms in use: %s", r.Raw)
	}
	if gs := e.gameServer(t, addr); gs.Capacity != 3 || gs.InUse != 3 {
		t.Fatalf("a refused capacity changed the record: %d/%d", gs.InUse, gs.Capacity)
	}
	// The backend's DELETE gives a room back too.
	e.do(t, http.MethodDelete, "/v1/allocations/gi-3", "").expect(t, http.StatusOK, "")
	if inUse := e.requireRoomsBalance(t); inUse[addr] != 2 {
		t.Fatalf("rooms in use %v, want 2 on %s", inUse, addr)
	}
	if n := len(e.stub.Allocations()); n != 3 {
		t.Fatalf("%d upstream allocations, want 3 (gi-1, gi-4, gi-5)", n)
	}
}

// Packed takes the server with the fewest free rooms, Distributed the one
// with the most.
func TestRoomsScheduling(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.stub.Always("us-west", gfemu.Answer{})
	roomy, tight := newSessionServer(t), newSessionServer(t)
	offer := func(id string, capacity int, cb *sessionServer) string {
		// Dedicated: a server of its own, not a room on the first.
		r := e.allocate(t, fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":"us-west","partnerGameToken":%q,"dedicated":true}`, id, tokenFor(id))).
			expect(t, http.StatusCreated, "")
		e.linkRooms(t, id, capacity, cb).expect(t, http.StatusOK, "")
		return serverAddress(r)
	}
	roomyAddr, tightAddr := offer("gi-r", 5, roomy), offer("gi-t", 2, tight)
	tests := []struct {
		id, extra, want string
	}{
		{"gi-p", "", tightAddr},
		{"gi-d", `,"scheduling":"Distributed"`, roomyAddr},
		{"gi-p2", `,"scheduling":"Packed"`, roomyAddr}, // tight is full now
	}
	for _, tc := range tests {
		r := e.allocateIn(t, tc.id, "us-west", tc.extra).expect(t, http.StatusCreated, "")
		if p, called := placement(r); p != "room" || !reflect.DeepEqual(called, []string{tc.want}) {
			t.Fatalf("%s: placement %q on %v, want a room on %s", tc.id, p, called, tc.want)
		}
	}
	// Another armada set is another pool: never a candidate.
	other := e.allocate(t, `{"gameInstanceId":"gi-o","desiredRegion":"us-west","gameServerVersion":"prag::other-set"}`).expect(t, http.StatusCreated, "")
	if other.Body["placement"] != "allocator" {
		t.Fatalf("another armada set took a room: %s", other.Raw)
	}
	e.requireRoomsBalance(t)
}

// The rooms object is checked before anything is stored: each problem is a
// 400 naming its field, and the link does not happen.
func TestRoomOffersBadInput(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.stub.Always("us-west", gfemu.Answer{})
	cb := newSessionServer(t)
	e.allocated(t, "gi-1")
	tests := []struct{ name, body, want string }{
		{"another host", `{"rooms":{"capacity":4,"callbackUrl":"http://169.254.169.254/latest/meta-data","callbackToken":"` + roomToken + `"}}`, "rooms.callbackUrl must lead to the host GameFabric allocated"},
		{"a host name for the IP", `{"rooms":{"capacity":4,"callbackUrl":"http://localhost:7600/s","callbackToken":"` + roomToken + `"}}`, "rooms.callbackUrl must lead"},
		{"capacity out of range", `{"rooms":{"capacity":257,"callbackUrl":"` + cb.URL() + `","callbackToken":"` + roomToken + `"}}`, "rooms.capacity must be 0-256"},
		{"capacity missing", `{"rooms":{"callbackUrl":"` + cb.URL() + `"}}`, "rooms.capacity is required"},
		{"capacity a string", `{"rooms":{"capacity":"4"}}`, "rooms.capacity"},
		{"no token", `{"rooms":{"capacity":4,"callbackUrl":"` + cb.URL() + `"}}`, "rooms.callbackToken is required"},
		{"a token with spaces", `{"rooms":{"capacity":4,"callbackUrl":"` + cb.URL() + `","callbackToken":"` + roomToken + ` x"}}`, "rooms.callbackToken must be"},
		{"not http", `{"rooms":{"capacity":4,"callbackUrl":"ftp://127.0.0.1/s","callbackToken":"` + roomToken + `"}}`, "rooms.callbackUrl must be an absolute http"},
		{"close without rooms", `{"rooms":{"capacity":0}}`, "rooms.capacity 0"},
		{"unknown field", `{"rooms":{"capacity":4,"size":4}}`, `unknown field "size"`},
		{"rooms not an object", `{"rooms":[4]}`, "rooms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.server(t, "link", "gi-1", tc.body).expect(t, http.StatusBadRequest, "INVALID_REQUEST")
			if msg := fmt.Sprint(r.Body["error"].(map[string]any)["message"]); !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q, want %q", msg, tc.want)
			}
			noTokens(t, r.Raw)
			if state := e.state(t, "gi-1"); state != "Allocated" {
				t.Fatalf("the refused link moved the instance to %s", state)
			}
			if servers, _, _ := e.servers.Scan(t.Context(), 10); len(servers) != 0 {
				t.Fatalf("the refused offer stored %v", servers)
			}
		})
	}
	// A good one still works afterwards.
	e.linkRooms(t, "gi-1", 4, cb).expect(t, http.StatusOK, "")
	if rec, _ := e.store.Get(t.Context(), "gi-1"); rec.RoomServer == "" || rec.State != gameinstance.StateLinked {
		t.Fatalf("after a good offer: %s holding %q", rec.State, rec.RoomServer)
	}
}
