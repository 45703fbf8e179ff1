package eventcatalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

const (
	eventName = "GameFabricMatchmakingSucceeded"
	matchID   = "7c2e9a41-5b0d-4f8e-9d3a-1e6b2c8f4a90"
)

// standaloneDetail is a standalone configuration's MatchmakingSucceeded
// detail (GameFabric's event-standalone.json) of n players, compacted as
// MatchmakingFunction keeps it. A player attribute holds a number no
// float64 can, and the team's name a character JSON may escape: kept raw,
// both survive as sent.
func standaloneDetail(n int) []byte {
	var tickets, players []string
	for i := range n {
		p := fmt.Sprintf(`{"playerId":"5e1b7a3c-0f2d-4c8e-9a6b-%012d","playerSessionId":"psess-8d4f2a6c-1e3b-4f7a-b9c0-%012d","team":"red & gold","skill":12345678901234567890}`, i, i)
		tickets = append(tickets, fmt.Sprintf(`{"ticketId":"c7ebd0c2-fa69-4050-b716-%012d","startTime":"2026-11-24T11:43:48.183Z","players":[%s]}`, i, p))
		players = append(players, p)
	}
	return []byte(`{"tickets":[` + strings.Join(tickets, ",") + `],"customEventData":"{\"region\":\"eu\",\"attributes\":{}}","type":"MatchmakingSucceeded",` +
		`"gameSessionInfo":{"players":[` + strings.Join(players, ",") + `]},"matchId":"` + matchID + `"}`)
}

// placed is the GameServerAllocated event of the match's instance.
func placed(t *testing.T, server *gameinstance.Server) Event {
	t.Helper()
	old := gameinstance.Record{GameInstanceID: matchID, State: gameinstance.StateAllocating, Version: 1, Fingerprint: gameinstance.Fingerprint{Match: true}}
	cur := old
	cur.State, cur.Version, cur.Server, cur.UpdatedAt = gameinstance.StateAllocated, 2, server, t0
	evs := FromGameInstance(&old, cur)
	if len(evs) != 1 || evs[0].Type != GameServerAllocated {
		t.Fatalf("events %+v", evs)
	}
	return evs[0]
}

var gameServer = &gameinstance.Server{Address: "203.0.113.7:7777", IP: "203.0.113.7", Ports: map[string]int{"game": 7777, "query": 27015}}

func fields(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

func TestMatchmaking(t *testing.T) {
	kept := standaloneDetail(2)
	m := gameinstance.Match{ID: matchID, Detail: kept, TicketIDs: []string{"c7ebd0c2-fa69-4050-b716-000000000000"}}
	ev, err := Matchmaking(eventName, m, placed(t, gameServer))
	if err != nil {
		t.Fatal(err)
	}
	wantKey := matchID + ":2:" + eventName
	if ev.Type != eventName || !ev.Time.Equal(t0) || ev.Match == nil || ev.Instance != nil || ev.Key() != wantKey || ev.Subject() != matchID {
		t.Fatalf("event %+v (key %s)", ev, ev.Key())
	}
	body, err := ev.Detail()
	if err != nil {
		t.Fatal(err)
	}
	got, was := fields(t, body), fields(t, kept)
	if string(got["type"]) != `"`+eventName+`"` || string(got["idempotencyKey"]) != `"`+wantKey+`"` {
		t.Fatalf("type %s, idempotencyKey %s", got["type"], got["idempotencyKey"])
	}
	// Everything else FlexMatch sent is there as it was sent.
	for k, v := range was {
		if k == "type" || k == "gameSessionInfo" {
			continue
		}
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s = %s, want it as sent: %s", k, got[k], v)
		}
	}
	if len(got) != len(was)+1 {
		t.Errorf("fields %d, want the %d sent and idempotencyKey", len(got), len(was))
	}
	info, wasInfo := fields(t, got["gameSessionInfo"]), fields(t, was["gameSessionInfo"])
	if !bytes.Equal(info["players"], wasInfo["players"]) || !strings.Contains(string(info["players"]), `"skill":12345678901234567890`) {
		t.Errorf("players = %s, want them as sent: %s", info["players"], wasInfo["players"])
	}
	if string(info["ipAddress"]) != `"203.0.113.7"` || string(info["port"]) != "7777" || string(info["gameSessionArn"]) != `""` || len(info) != 4 {
		t.Errorf("gameSessionInfo = %s", got["gameSessionInfo"])
	}
	// Another name (MATCHMAKING_EVENT_NAME) is both detail-type and type.
	other, err := Matchmaking("MatchReady", m, placed(t, gameServer))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := other.Detail()
	if other.Type != "MatchReady" || string(fields(t, b)["type"]) != `"MatchReady"` || other.Key() != matchID+":2:MatchReady" {
		t.Fatalf("event %s %s: %s", other.Type, other.Key(), b)
	}
}

func TestMatchmakingGameSessionInfo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		detail string
		server *gameinstance.Server
		want   map[string]string // gameSessionInfo's members, as JSON
	}{
		{"created when missing", `{"type":"MatchmakingSucceeded","matchId":"m"}`, gameServer,
			map[string]string{"ipAddress": `"203.0.113.7"`, "port": "7777", "gameSessionArn": `""`}},
		{"replaced when no object", `{"type":"MatchmakingSucceeded","gameSessionInfo":"x"}`, gameServer,
			map[string]string{"ipAddress": `"203.0.113.7"`, "port": "7777", "gameSessionArn": `""`}},
		{"null", `{"type":"MatchmakingSucceeded","gameSessionInfo":null}`, gameServer,
			map[string]string{"ipAddress": `"203.0.113.7"`, "port": "7777", "gameSessionArn": `""`}},
		{"a managed event's session is replaced", `{"gameSessionInfo":{"gameSessionArn":"arn:aws:gamelift:us-west-2::gamesession/x","ipAddress":"192.168.1.1","port":10777,"players":[]}}`, gameServer,
			map[string]string{"ipAddress": `"203.0.113.7"`, "port": "7777", "gameSessionArn": `""`, "players": "[]"}},
		{"the game port among others", `{}`, &gameinstance.Server{IP: "198.51.100.1", Ports: map[string]int{"a-query": 1, "game": 7777, "z-rcon": 3}},
			map[string]string{"ipAddress": `"198.51.100.1"`, "port": "7777", "gameSessionArn": `""`}},
		{"a single port of another name", `{}`, &gameinstance.Server{IP: "198.51.100.1", Ports: map[string]int{"default": 7600}},
			map[string]string{"ipAddress": `"198.51.100.1"`, "port": "7600", "gameSessionArn": `""`}},
		{"no port to choose: none", `{}`, &gameinstance.Server{IP: "198.51.100.1", Ports: map[string]int{"a": 1, "b": 2}},
			map[string]string{"ipAddress": `"198.51.100.1"`, "gameSessionArn": `""`}},
		{"no port to choose: a managed event's port dropped", `{"gameSessionInfo":{"port":10777}}`, &gameinstance.Server{IP: "198.51.100.1", Ports: map[string]int{"a": 1, "b": 2}},
			map[string]string{"ipAddress": `"198.51.100.1"`, "gameSessionArn": `""`}},
		{"no ip: the address", `{}`, &gameinstance.Server{Address: "gs-1.example.net", Ports: map[string]int{"game": 7777}},
			map[string]string{"ipAddress": `"gs-1.example.net"`, "port": "7777", "gameSessionArn": `""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := Matchmaking(eventName, gameinstance.Match{ID: matchID, Detail: []byte(tc.detail)}, placed(t, tc.server))
			if err != nil {
				t.Fatal(err)
			}
			info := fields(t, fields(t, ev.Match.Body)["gameSessionInfo"])
			got := map[string]string{}
			for k, v := range info {
				got[k] = string(v)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("gameSessionInfo %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMatchmakingWithoutItsDetail(t *testing.T) {
	for _, detail := range []string{"", "[]", "null", "not json", `"x"`} {
		_, err := Matchmaking(eventName, gameinstance.Match{ID: matchID, Detail: []byte(detail)}, placed(t, gameServer))
		if err == nil {
			t.Errorf("detail %q: no error", detail)
		}
		if detail == "" && !errors.Is(err, ErrNoMatchDetail) {
			t.Errorf("no detail: err = %v, want ErrNoMatchDetail", err)
		}
	}
}

// What EventBridge counts of an entry: source, detail-type, detail, time.
func entrySize(e Event) int {
	b, _ := e.Detail()
	return len(Source) + len(e.Type) + len(b) + 14
}

func TestMatchmakingFitsAnEvent(t *testing.T) {
	// Characters json.Marshal would escape (< > & as \u003c...): kept as
	// they came, so the event grows by the server's address only.
	escapable := []byte(`{"type":"MatchmakingSucceeded","note":"` + strings.Repeat("<&>", (gameinstance.MaxMatchDetailBytes-60)/3) + `"}`)
	for _, tc := range []struct {
		name   string
		detail []byte
	}{
		{"200 players", standaloneDetail(gameinstance.MaxMatchPlayers)},
		{"the largest detail kept", append(append([]byte(`{"type":"MatchmakingSucceeded","note":"`), bytes.Repeat([]byte("n"), gameinstance.MaxMatchDetailBytes-42)...), `"}`...)},
		{"the largest detail kept, of characters JSON may escape", escapable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.detail) > gameinstance.MaxMatchDetailBytes {
				t.Fatalf("the detail is %d bytes, more than is kept", len(tc.detail))
			}
			ev, err := Matchmaking(eventName, gameinstance.Match{ID: matchID, Detail: tc.detail}, placed(t, gameServer))
			if err != nil {
				t.Fatal(err)
			}
			if n := entrySize(ev); n > 256<<10 || n > len(tc.detail)+512 {
				t.Fatalf("the event is %d bytes from a detail of %d; EventBridge takes 256 KiB", n, len(tc.detail))
			}
		})
	}
}

func TestInstanceDetailOfAMatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		match bool
		want  string
	}{
		{"a match's instance", true, `"matchId":"gi-1"`},
		{"an API call's instance", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mod := func(r *gameinstance.Record) { r.Fingerprint.Match = tc.match }
			failed := rec(gameinstance.StateFailed, 4, func(r *gameinstance.Record) {
				mod(r)
				r.Failure = &gameinstance.Failure{Code: gameinstance.CodeInvalidMatch, Message: "customEventData names regoin"}
			})
			for _, ev := range [][]Event{
				FromGameInstance(rec(gameinstance.StateAllocating, 1, mod), *rec(gameinstance.StateAllocated, 2, mod)),
				FromGameInstance(nil, *failed),
			} {
				if len(ev) != 1 {
					t.Fatalf("events %+v", ev)
				}
				b, _ := ev[0].Detail()
				if tc.want != "" && !strings.Contains(string(b), tc.want) || tc.want == "" && strings.Contains(string(b), "matchId") {
					t.Errorf("%s detail %s, want %q", ev[0].Type, b, tc.want)
				}
				if strings.Contains(string(b), "ticketIds") {
					t.Errorf("ticketIds are EventsFunction's to add: %s", b)
				}
			}
		})
	}
}
