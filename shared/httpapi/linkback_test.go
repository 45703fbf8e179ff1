package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func TestBearerToken(t *testing.T) {
	tests := map[string]string{
		"Bearer abc":   "abc",
		"bearer  abc ": "abc",
		"Bearer":       "",
		"Basic abc":    "",
		"abc":          "",
		"":             "",
	}
	for header, want := range tests {
		got, err := BearerToken(header)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", header, got, err, want)
		}
	}
}

type recordingLinkBack struct {
	id, token, reason string
	info              *gameinstance.LinkInfo
	offer             *gameinstance.RoomOffer
	allSessions       bool
}

func (f *recordingLinkBack) Link(_ context.Context, id, token string, info *gameinstance.LinkInfo, offer *gameinstance.RoomOffer) (gameinstance.Record, error) {
	f.id, f.token, f.info, f.offer = id, token, info, offer
	return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateLinked}, nil
}

func (f *recordingLinkBack) Heartbeat(_ context.Context, id, token string) (gameinstance.Record, error) {
	f.id, f.token = id, token
	return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateLinked}, nil
}

func (f *recordingLinkBack) HeartbeatSessions(_ context.Context, id, token string) (gameinstance.Record, []gameinstance.Record, error) {
	f.id, f.token, f.allSessions = id, token, true
	return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateLinked},
		[]gameinstance.Record{{GameInstanceID: "gi-2", State: gameinstance.StateEnded}}, nil
}

func (f *recordingLinkBack) End(_ context.Context, id, token, reason string) (gameinstance.Record, error) {
	f.id, f.token, f.reason = id, token, reason
	return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateEnded}, nil
}

func TestLinkBackRequests(t *testing.T) {
	tests := []struct {
		name, path, auth, body string
		status                 int
		check                  func(*recordingLinkBack) bool
	}{
		{"link with info", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":"1.2.3.4:7777","ports":{"game":7777},"serverName":"s1"}`, 200,
			func(f *recordingLinkBack) bool {
				return f.id == "gi-1" && f.token == "tok" && f.info.Ports["game"] == 7777 && f.info.ServerName == "s1"
			}},
		{"link without body", "/v1/game-instances/gi-1/link", "Bearer tok", ``, 200, func(f *recordingLinkBack) bool { return f.info == nil && f.offer == nil }},
		{"link with rooms", "/v1/game-instances/gi-1/link", "Bearer tok",
			`{"address":"1.2.3.4:7777","rooms":{"capacity":4,"callbackUrl":"http://1.2.3.4:7600/s","callbackToken":"t"}}`, 200,
			func(f *recordingLinkBack) bool {
				return f.offer != nil && *f.offer == gameinstance.RoomOffer{Capacity: 4, CallbackURL: "http://1.2.3.4:7600/s", CallbackToken: "t"}
			}},
		{"link closing its rooms", "/v1/game-instances/gi-1/link", "Bearer tok", `{"rooms":{"capacity":0}}`, 200,
			func(f *recordingLinkBack) bool { return f.offer != nil && f.offer.Capacity == 0 }},
		{"rooms without capacity", "/v1/game-instances/gi-1/link", "Bearer tok", `{"rooms":{"callbackUrl":"http://1.2.3.4/s"}}`, 400, nil},
		{"rooms capacity not a number", "/v1/game-instances/gi-1/link", "Bearer tok", `{"rooms":{"capacity":"4"}}`, 400, nil},
		{"rooms with an unknown field", "/v1/game-instances/gi-1/link", "Bearer tok", `{"rooms":{"capacity":4,"url":"x"}}`, 400, nil},
		{"rooms not an object", "/v1/game-instances/gi-1/link", "Bearer tok", `{"rooms":4}`, 400, nil},
		{"link with unknown field", "/v1/game-instances/gi-1/link", "Bearer tok", `{"hostname":"x"}`, 400, nil},
		{"link with bad port", "/v1/game-instances/gi-1/link", "Bearer tok", `{"ports":{"game":70000}}`, 400, nil},
		{"link with an IPv6 address", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":"[2001:db8::1]:7777"}`, 200,
			func(f *recordingLinkBack) bool { return f.info.Address == "[2001:db8::1]:7777" }},
		{"link with a host name", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":"gs-1.example.net:7777"}`, 200, nil},
		{"link with an address without a port", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":"1.2.3.4"}`, 400, nil},
		{"link with port 0", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":"1.2.3.4:0"}`, 400, nil},
		{"link with a port out of range", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":"1.2.3.4:65536"}`, 400, nil},
		{"link with no host", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":":7777"}`, 400, nil},
		{"link with a URL", "/v1/game-instances/gi-1/link", "Bearer tok", `{"address":"http://1.2.3.4:7777/x"}`, 400, nil},
		{"link with array body", "/v1/game-instances/gi-1/link", "Bearer tok", `[]`, 400, nil},
		{"missing token", "/v1/game-instances/gi-1/heartbeat", "", ``, 401, nil},
		{"basic auth", "/v1/game-instances/gi-1/heartbeat", "Basic dG9rOg==", ``, 401, nil},
		{"heartbeat", "/v1/game-instances/gi-1/heartbeat", "Bearer tok", ``, 200, func(f *recordingLinkBack) bool { return f.token == "tok" && !f.allSessions }},
		{"heartbeat, empty object", "/v1/game-instances/gi-1/heartbeat", "Bearer tok", `{}`, 200, func(f *recordingLinkBack) bool { return !f.allSessions }},
		{"heartbeat for all sessions", "/v1/game-instances/gi-1/heartbeat", "Bearer tok", `{"allSessions":true}`, 200,
			func(f *recordingLinkBack) bool { return f.token == "tok" && f.allSessions }},
		{"heartbeat, allSessions not a bool", "/v1/game-instances/gi-1/heartbeat", "Bearer tok", `{"allSessions":"yes"}`, 400, nil},
		{"heartbeat, anything else in the body is ignored, as ever", "/v1/game-instances/gi-1/heartbeat", "Bearer tok", `{"all":true}`, 200,
			func(f *recordingLinkBack) bool { return f.token == "tok" && !f.allSessions }},
		{"heartbeat, a body that is not JSON is ignored, as ever", "/v1/game-instances/gi-1/heartbeat", "Bearer tok", `ok`, 200,
			func(f *recordingLinkBack) bool { return f.token == "tok" && !f.allSessions }},
		{"heartbeat, allSessions false", "/v1/game-instances/gi-1/heartbeat", "Bearer tok", `{"allSessions":false}`, 200,
			func(f *recordingLinkBack) bool { return !f.allSessions }},
		{"end with reason", "/v1/game-instances/gi-1/end", "Bearer tok", `{"reason":"IWON"}`, 200, func(f *recordingLinkBack) bool { return f.reason == "IWON" }},
		{"end with long reason", "/v1/game-instances/gi-1/end", "Bearer tok", `{"reason":"` + strings.Repeat("x", 300) + `"}`, 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &recordingLinkBack{}
			h := NewLinkBackHandler(f, 30*time.Second, logging.New(io.Discard, 0))
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Fatalf("401 without WWW-Authenticate")
			}
			if tc.check != nil && !tc.check(f) {
				t.Fatalf("service saw %+v", f)
			}
			if tc.status != 200 && f.id != "" {
				t.Fatalf("a rejected request reached the service: %+v", f)
			}
		})
	}
}

// An all-sessions heartbeat lists the server's other sessions (an empty
// list when there are none to report); a plain one carries no list.
func TestHeartbeatAnswerListsSessions(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"allSessions":true}`, `"sessions":[{"gameInstanceId":"gi-2","state":"Ended"}]`},
		{``, ``},
	} {
		h := NewLinkBackHandler(&recordingLinkBack{}, 30*time.Second, logging.New(io.Discard, 0))
		req := httptest.NewRequest(http.MethodPost, "/v1/game-instances/gi-1/heartbeat", strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Body.String(); rec.Code != 200 || strings.Contains(got, `"sessions"`) != (tc.want != "") || !strings.Contains(got, tc.want) {
			t.Errorf("body %s answered %d %s, want %q", tc.body, rec.Code, got, tc.want)
		}
	}
}
