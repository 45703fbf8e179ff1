package gameinstance

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// A callback token is a credential: no way of printing a room offer or a
// game server's record shows it.
func TestRoomCredentialsNeverPrint(t *testing.T) {
	const secret = "callback-token-0123456789abcdef0123456789"
	values := []any{
		RoomOffer{Capacity: 4, CallbackURL: "http://203.0.113.10:7600/s", CallbackToken: secret},
		GameServer{Address: "203.0.113.10:7777", Capacity: 4, InUse: 2, CallbackURL: "http://203.0.113.10:7600/s", CallbackToken: secret},
	}
	for _, v := range values {
		var log bytes.Buffer
		slog.New(slog.NewJSONHandler(&log, nil)).Info("x", "v", v)
		for _, out := range []string{fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s", v, v, v, v), log.String()} {
			if strings.Contains(out, secret) {
				t.Errorf("%T printed its token: %s", v, out)
			}
			if !strings.Contains(out, "203.0.113.10") {
				t.Errorf("%T printed nothing useful: %s", v, out)
			}
		}
	}
}

func TestHoldsRoom(t *testing.T) {
	for _, tc := range []struct {
		state State
		room  string
		want  bool
	}{
		{StateAllocating, "a:1", true}, {StateAllocated, "a:1", true}, {StateLinked, "a:1", true},
		{StateEnded, "a:1", false}, {StateUnhealthy, "a:1", false}, {StateFailed, "a:1", false}, {StateLinked, "", false},
	} {
		if got := (Record{State: tc.state, RoomServer: tc.room}).HoldsRoom(); got != tc.want {
			t.Errorf("%s with room %q: HoldsRoom = %v", tc.state, tc.room, got)
		}
	}
}

func TestPlacedBy(t *testing.T) {
	server := &Server{Address: "a:1"}
	for _, tc := range []struct {
		rec  Record
		want Placement
	}{
		{Record{}, ""},
		{Record{Server: server}, PlacementAllocator}, // written before rooms
		{Record{Server: server, Placement: PlacementRoom}, PlacementRoom},
	} {
		if got := tc.rec.PlacedBy(); got != tc.want {
			t.Errorf("%+v: PlacedBy = %q, want %q", tc.rec, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"}, {"hello", 3, "hel"}, {"h\xffllo", 10, "h?llo"}, {"héllo", 2, "h?"},
	} {
		if got := Clip(tc.in, tc.n); got != tc.want || len(got) > tc.n {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
