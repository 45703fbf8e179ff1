package matchmaking

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
	matchID   = "7c2e9a41-5b0d-4f8e-9d3a-1e6b2c8f4a90"
	eventID   = "2f9d1c7e-8a4b-4e6f-b1d2-6c3a9e5f7b08"
	configArn = "arn:aws:gamelift:eu-central-1:123456789012:matchmakingconfiguration/arena-standalone"
)

// standalone is a MatchmakingSucceeded event of a standalone FlexMatch
// configuration, shaped as GameFabric's event-standalone.json capture:
// one player per ticket, gameSessionInfo with only players, and
// customEventData a JSON string. Each player also has a playerSessionId,
// as a managed configuration's event has: the larger of the two shapes.
func standalone(players int) map[string]any {
	var tickets, session []any
	for i := range players {
		p := map[string]any{"playerId": fmt.Sprintf("5e1b7a3c-0f2d-4c8e-9a6b-%012d", i),
			"playerSessionId": fmt.Sprintf("psess-8d4f2a6c-1e3b-4f7a-b9c0-%012d", i), "team": []string{"red_team", "blue_team"}[i%2]}
		tickets = append(tickets, map[string]any{"ticketId": fmt.Sprintf("c7ebd0c2-fa69-4050-b716-%012d", i),
			"startTime": "2026-11-24T11:43:48.183Z", "players": []any{p}})
		session = append(session, p)
	}
	return map[string]any{
		"version": "0", "id": eventID, "detail-type": DetailType, "source": Source, "account": "123456789012",
		"time": "2026-11-24T11:45:03.738Z", "region": "eu-central-1", "resources": []any{configArn},
		"detail": map[string]any{
			"tickets":         tickets,
			"customEventData": `{"region":"eu","attributes":{}}`,
			"type":            SucceededType,
			"gameSessionInfo": map[string]any{"players": session},
			"matchId":         matchID,
		},
	}
}

func detailOf(ev map[string]any) map[string]any { return ev["detail"].(map[string]any) }

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeAStandaloneEvent(t *testing.T) {
	ev := standalone(2)
	raw, err := json.MarshalIndent(ev, "", "  ") // as EventBridge's console shows it
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rejected != nil {
		t.Fatalf("rejected: %+v", got.Rejected)
	}
	wantIDs := []string{"c7ebd0c2-fa69-4050-b716-000000000000", "c7ebd0c2-fa69-4050-b716-000000000001"}
	if got.Match.ID != matchID || got.Match.EventID != eventID || got.Match.ConfigurationArn != configArn ||
		!reflect.DeepEqual(got.Match.TicketIDs, wantIDs) || got.Players != 2 {
		t.Fatalf("match %+v, %d players", got.Match, got.Players)
	}
	if got.Custom.Region != "eu" || got.Custom.Version() != "" {
		t.Fatalf("customEventData %+v", got.Custom)
	}
	// The detail is kept as it came, compacted: what is published again.
	var want bytes.Buffer
	if err := json.Compact(&want, encode(t, detailOf(ev))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Match.Detail, want.Bytes()) {
		t.Fatalf("detail kept:\n%s\nwant:\n%s", got.Match.Detail, want.Bytes())
	}
}

func TestDecodeRefusesWhatIsNoMatch(t *testing.T) {
	set := func(path string, v any) func(map[string]any) {
		return func(ev map[string]any) {
			m := ev
			keys := strings.Split(path, ".")
			for _, k := range keys[:len(keys)-1] {
				m = m[k].(map[string]any)
			}
			if v == nil {
				delete(m, keys[len(keys)-1])
				return
			}
			m[keys[len(keys)-1]] = v
		}
	}
	for _, tc := range []struct {
		name string
		mod  func(map[string]any)
		raw  string // instead of the event, when set
	}{
		{"another source", set("source", "aws.events"), ""},
		{"another detail-type", set("detail-type", "GameLift Queue Placement Event"), ""},
		{"a MatchmakingTimedOut", set("detail.type", "MatchmakingTimedOut"), ""},
		{"no detail.type", set("detail.type", nil), ""},
		{"no detail", set("detail", nil), ""},
		{"a detail that is no object", set("detail", "MatchmakingSucceeded"), ""},
		{"no matchId", set("detail.matchId", nil), ""},
		{"a matchId with a slash", set("detail.matchId", "match/1"), ""},
		{"a matchId with a space", set("detail.matchId", "match 1"), ""},
		{"a matchId too long for a gameInstanceId", set("detail.matchId", strings.Repeat("m", gameinstance.MaxIDLength+1)), ""},
		{"not JSON", nil, "MatchmakingSucceeded " + matchID},
		{"a JSON array", nil, `[{"source":"aws.gamelift"}]`},
		{"empty", nil, ""},
		{"truncated", nil, `{"source":"aws.gamelift","detail-type":"GameLift Matchmaking Event","detail":{"type":"MatchmakingSucceeded"`},
		{"more than EventBridge's 256 KiB", set("detail.padding", strings.Repeat("x", 256<<10)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			if tc.mod != nil {
				ev := standalone(2)
				tc.mod(ev)
				raw = encode(t, ev)
			}
			got, err := Decode(raw)
			if !errors.Is(err, ErrNotAMatch) {
				t.Fatalf("err = %v (event %+v), want ErrNotAMatch", err, got)
			}
		})
	}
	// The matchId is what it is checked against: a valid one is a match.
	ev := standalone(1)
	detailOf(ev)["matchId"] = strings.Repeat("m", gameinstance.MaxIDLength-5) + "_.:-9"
	if _, err := Decode(encode(t, ev)); err != nil {
		t.Fatalf("a matchId of %d valid characters: %v", gameinstance.MaxIDLength, err)
	}
}

func TestDecodeBoundsTheMatch(t *testing.T) {
	withPlayersInSessionOnly := func(n int) map[string]any {
		ev := standalone(2)
		var players []any
		for i := range n {
			players = append(players, map[string]any{"playerId": fmt.Sprintf("p-%d", i)})
		}
		detailOf(ev)["gameSessionInfo"] = map[string]any{"players": players}
		return ev
	}
	manyEmptyTickets := func(n int) map[string]any {
		ev := standalone(1)
		var tickets []any
		for i := range n {
			tickets = append(tickets, map[string]any{"ticketId": fmt.Sprintf("t-%d", i), "players": []any{}})
		}
		detailOf(ev)["tickets"] = tickets
		return ev
	}
	bigDetail := func() map[string]any {
		ev := standalone(2)
		// Legal for EventBridge (below 256 KiB), more than is kept.
		detailOf(ev)["ruleEvaluationMetrics"] = strings.Repeat("r", gameinstance.MaxMatchDetailBytes)
		return ev
	}
	tooLargeAndInvalid := func() map[string]any {
		ev := standalone(201)
		detailOf(ev)["customEventData"] = "not JSON"
		return ev
	}
	for _, tc := range []struct {
		name     string
		ev       map[string]any
		players  int
		tickets  int
		tooLarge bool
	}{
		{"200 players with realistic ids fit", standalone(200), 200, 200, false},
		{"201 players", standalone(201), 201, 200, true},
		{"201 players in gameSessionInfo only", withPlayersInSessionOnly(201), 201, 2, true},
		{"201 tickets without players", manyEmptyTickets(201), 1, 200, true},
		{"a detail over 128 KiB", bigDetail(), 2, 2, true},
		{"too large says so before a bad customEventData", tooLargeAndInvalid(), 201, 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := encode(t, tc.ev)
			got, err := Decode(raw)
			if err != nil {
				t.Fatalf("err = %v; a match too large is a match that fails, not an event set aside", err)
			}
			if got.Match.ID != matchID || got.Players != tc.players || len(got.Match.TicketIDs) != tc.tickets {
				t.Fatalf("match %s with %d players and %d ticket ids, want %d and %d", got.Match.ID, got.Players, len(got.Match.TicketIDs), tc.players, tc.tickets)
			}
			if !tc.tooLarge {
				if got.Rejected != nil || len(got.Match.Detail) == 0 || len(got.Match.Detail) > gameinstance.MaxMatchDetailBytes {
					t.Fatalf("rejected %+v, detail of %d bytes (event %d bytes)", got.Rejected, len(got.Match.Detail), len(raw))
				}
				return
			}
			if got.Rejected == nil || got.Rejected.Code != gameinstance.CodeMatchTooLarge || got.Rejected.Message == "" {
				t.Fatalf("rejected %+v, want MATCH_TOO_LARGE", got.Rejected)
			}
			if got.Match.Detail != nil {
				t.Fatalf("a detail of %d bytes was kept from a match too large", len(got.Match.Detail))
			}
		})
	}
}

func TestDecodeCustomEventData(t *testing.T) {
	for _, tc := range []struct {
		name    string
		custom  any // the detail's customEventData; nil leaves it out
		region  string
		version string
		invalid bool
	}{
		{"GameFabric's guide", `{"region":"eu","attributes":{}}`, "eu", "", false},
		{"none", nil, "", "", false},
		{"our version", `{"region":"us-west","gameServerVersion":"prod::arena"}`, "us-west", "prod::arena", false},
		{"not JSON", `region=eu`, "", "", true},
		{"an unknown field", `{"regoin":"eu"}`, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := standalone(2)
			if tc.custom == nil {
				delete(detailOf(ev), "customEventData")
			} else {
				detailOf(ev)["customEventData"] = tc.custom
			}
			got, err := Decode(encode(t, ev))
			if err != nil {
				t.Fatal(err)
			}
			if tc.invalid {
				if got.Rejected == nil || got.Rejected.Code != gameinstance.CodeInvalidMatch || !strings.Contains(got.Rejected.Message, "customEventData") {
					t.Fatalf("rejected %+v, want INVALID_MATCH naming customEventData", got.Rejected)
				}
				if len(got.Match.TicketIDs) != 2 {
					t.Fatalf("ticket ids %v: AllocationFailed needs them", got.Match.TicketIDs)
				}
				return
			}
			if got.Rejected != nil || got.Custom.Region != tc.region || got.Custom.Version() != tc.version {
				t.Fatalf("rejected %+v, custom %+v", got.Rejected, got.Custom)
			}
		})
	}
}

func TestDecodeKeepsValidTicketIDs(t *testing.T) {
	ev := standalone(0)
	ids := []string{"ok-1", "", "has/slash", "has space", strings.Repeat("t", 129), strings.Repeat("t", 128), "A.b-9", "ticket_underscore"}
	var tickets []any
	for _, id := range ids {
		tickets = append(tickets, map[string]any{"ticketId": id, "players": []any{map[string]any{"playerId": "p-" + fmt.Sprint(len(tickets))}}})
	}
	detailOf(ev)["tickets"] = tickets
	got, err := Decode(encode(t, ev))
	if err != nil {
		t.Fatal(err)
	}
	// Every ticket's players count, whether DescribeMatchmaking could take
	// its id or not.
	want := []string{"ok-1", strings.Repeat("t", 128), "A.b-9"}
	if !reflect.DeepEqual(got.Match.TicketIDs, want) || got.Players != len(ids) || got.Rejected != nil {
		t.Fatalf("ticket ids %q, %d players, rejected %+v; want %q and %d", got.Match.TicketIDs, got.Players, got.Rejected, want, len(ids))
	}
}
