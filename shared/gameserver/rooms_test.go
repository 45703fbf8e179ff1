package gameserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// testCallbackToken is a valid callback token (43 characters, as minted).
const testCallbackToken = "cbt-secret-0123456789abcdefghijklmnopqrstuv"

func TestRoomOfferValidate(t *testing.T) {
	ok := RoomOffer{Capacity: 4, CallbackURL: "http://203.0.113.10:7600/sessions", CallbackToken: testCallbackToken}
	with := func(f func(*RoomOffer)) RoomOffer { o := ok; f(&o); return o }
	tests := []struct {
		name  string
		offer RoomOffer
		want  []string // parts of the error; none: valid
	}{
		{"four rooms", ok, nil},
		{"https, padded token", with(func(o *RoomOffer) { o.CallbackURL, o.CallbackToken = "https://h/s", testCallbackToken+"==" }), nil},
		{"the most rooms", with(func(o *RoomOffer) { o.Capacity = MaxRooms }), nil},
		{"close: capacity alone", RoomOffer{}, nil},
		{"dedicated record", RoomOffer{Capacity: 1}, nil},
		{"too many rooms", with(func(o *RoomOffer) { o.Capacity = MaxRooms + 1 }), []string{"rooms.capacity must be 0-256", "got 257"}},
		{"negative", RoomOffer{Capacity: -1}, []string{"rooms.capacity"}},
		{"rooms without a callback, both named", RoomOffer{Capacity: 2},
			[]string{"rooms.callbackUrl is required", "rooms.callbackToken is required"}},
		{"not http", with(func(o *RoomOffer) { o.CallbackURL = "ftp://h/s" }), []string{"rooms.callbackUrl must be an absolute http:// or https:// URL"}},
		{"relative", with(func(o *RoomOffer) { o.CallbackURL = "/sessions" }), []string{"rooms.callbackUrl"}},
		{"userinfo", with(func(o *RoomOffer) { o.CallbackURL = "http://u:pw-secret@h/s" }), []string{"must not carry credentials"}},
		{"fragment", with(func(o *RoomOffer) { o.CallbackURL = "http://h/s#x" }), []string{"or a fragment"}},
		{"url too long", with(func(o *RoomOffer) { o.CallbackURL = "http://h/" + strings.Repeat("s", MaxCallbackURLLength) }),
			[]string{"rooms.callbackUrl must be at most 2048"}},
		{"token too short", with(func(o *RoomOffer) { o.CallbackToken = "short" }), []string{"rooms.callbackToken must be 32-1024"}},
		{"token too long", with(func(o *RoomOffer) { o.CallbackToken = strings.Repeat("a", MaxCallbackTokenLength+1) }), []string{"rooms.callbackToken"}},
		{"token with a space", with(func(o *RoomOffer) { o.CallbackToken = testCallbackToken + " x" }), []string{"rooms.callbackToken"}},
		{"padding inside", with(func(o *RoomOffer) { o.CallbackToken = "=" + testCallbackToken }), []string{"rooms.callbackToken"}},
		{"every problem at once", RoomOffer{Capacity: 300, CallbackURL: "x", CallbackToken: "y"},
			[]string{"rooms.capacity", "rooms.callbackUrl", "rooms.callbackToken"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.offer.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q quotes a secret", err)
			}
		})
	}
}

func TestNewCallbackToken(t *testing.T) {
	a, b := NewCallbackToken(), NewCallbackToken()
	if len(a) != 43 || a == b || gameinstance.CallbackTokenProblem(a) != "" {
		t.Fatalf("tokens %q, %q", a, b)
	}
}

// Neither a RoomOffer nor a LinkRequest carrying one prints the token,
// however it is printed or logged.
func TestRoomOfferNeverPrintsTheToken(t *testing.T) {
	offer := &RoomOffer{Capacity: 4, CallbackURL: "http://203.0.113.10:7600/sessions", CallbackToken: testCallbackToken}
	req := LinkRequest{Address: "203.0.113.10:7777", Ports: map[string]int{"game": 7777}, ServerName: "s-1", Rooms: offer}
	var out bytes.Buffer
	for _, v := range []any{*offer, offer, req, &req} {
		for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
			fmt.Fprintf(&out, format+"\n", v)
		}
	}
	for _, h := range []slog.Handler{slog.NewJSONHandler(&out, nil), slog.NewTextHandler(&out, nil)} {
		slog.New(h).Info("linking", "link", req, "offer", offer, "value", *offer)
	}
	s := out.String()
	if strings.Contains(s, "cbt-secret") || !strings.Contains(s, "7600/sessions") || !strings.Contains(s, "s-1") {
		t.Fatalf("printed:\n%s", s)
	}
}

func TestLinkWithRooms(t *testing.T) {
	offer := &RoomOffer{Capacity: 4, CallbackURL: "http://203.0.113.10:7600/sessions", CallbackToken: testCallbackToken}
	tests := []struct {
		name      string
		offer     *RoomOffer
		script    []answer
		wantBody  string // "" = no call
		wantError string
	}{
		{"offered", offer, nil,
			`{"address":"a:1","rooms":{"capacity":4,"callbackUrl":"http://203.0.113.10:7600/sessions","callbackToken":"` + testCallbackToken + `"}}`, ""},
		{"closing sends the capacity alone", &RoomOffer{}, nil, `{"address":"a:1","rooms":{"capacity":0}}`, ""},
		{"a bad offer is not sent", &RoomOffer{Capacity: 4}, nil, "", "rooms.callbackUrl is required"},
		{"an echoed token is redacted", offer, []answer{{400, `{"error":{"code":"INVALID_REQUEST","message":"rooms.callbackUrl: bad (token ` +
			testCallbackToken + `)"}}`, nil}}, `{"address":"a:1","rooms":{"capacity":4,"callbackUrl":"http://203.0.113.10:7600/sessions","callbackToken":"` +
			testCallbackToken + `"}}`, "token [redacted]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeBackend(t, "")
			f.queue("link", tc.script...)
			c, logs := newTestClient(t, f, nil)
			_, err := c.Link(context.Background(), LinkRequest{Address: "a:1", Rooms: tc.offer})
			calls := f.requests("link")
			if tc.wantBody == "" && len(calls) != 0 || tc.wantBody != "" && (len(calls) != 1 || !jsonEqual(t, calls[0].body, tc.wantBody)) {
				t.Fatalf("calls %+v, want one with %s", calls, tc.wantBody)
			}
			if tc.wantError == "" && err != nil || tc.wantError != "" && (err == nil || !strings.Contains(err.Error(), tc.wantError)) {
				t.Fatalf("error %v, want %q", err, tc.wantError)
			}
			if err != nil && strings.Contains(err.Error(), testCallbackToken) || strings.Contains(logs.String(), testCallbackToken) {
				t.Fatalf("the callback token leaked: %v", err)
			}
		})
	}
}
