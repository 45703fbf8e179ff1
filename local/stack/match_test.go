package stack

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/matchmaking"
)

// delivered is the event as EventBridge hands it to a rule's target.
func delivered(t *testing.T, m Match) []byte {
	t.Helper()
	e := m.Entry
	b, err := json.Marshal(map[string]any{"version": "0", "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718", "detail-type": aws.ToString(e.DetailType),
		"source": aws.ToString(e.Source), "account": motoAccount, "time": e.Time.UTC().Format(time.RFC3339), "region": "us-east-1",
		"resources": e.Resources, "detail": json.RawMessage(aws.ToString(e.Detail))})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A built match is a standalone MatchmakingSucceeded event as GameFabric
// captured one, which the front door's own decoder takes as it is, and
// its tickets carry latencies that rank the players' near region first.
func TestBuildMatchIsARealisticStandaloneEvent(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 15, 9, 159e6, time.UTC)
	regions := []string{"us-west", "eu-central-1"}
	m, err := BuildMatch(MatchOptions{Players: 5, Near: "eu-central-1"}, regions, now)
	if err != nil {
		t.Fatal(err)
	}
	uuidForm := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	arn := "arn:aws:gamelift:us-east-1:123456789012:matchmakingconfiguration/local-standalone"
	if !uuidForm.MatchString(m.MatchID) || aws.ToString(m.Entry.Source) != "aws.gamelift" || aws.ToString(m.Entry.DetailType) != "GameLift Matchmaking Event" ||
		!reflect.DeepEqual(m.Entry.Resources, []string{arn}) || aws.ToString(m.Entry.EventBusName) != "default" || !m.Entry.Time.Equal(now) {
		t.Fatalf("entry %+v, match %s", m.Entry, m.MatchID)
	}
	var detail struct {
		Tickets []struct {
			TicketID, StartTime string
			Players             []map[string]string
		}
		CustomEventData any
		Type            string
		GameSessionInfo map[string][]map[string]string
		MatchID         string
	}
	if err := json.Unmarshal([]byte(aws.ToString(m.Entry.Detail)), &detail); err != nil {
		t.Fatal(err)
	}
	if detail.Type != "MatchmakingSucceeded" || detail.MatchID != m.MatchID || detail.CustomEventData != `{"region":"eu-central-1"}` ||
		len(detail.GameSessionInfo) != 1 || len(detail.GameSessionInfo["players"]) != 5 || len(detail.Tickets) != 5 {
		t.Fatalf("detail %s", aws.ToString(m.Entry.Detail))
	}
	if first := detail.Tickets[0]; first.StartTime != "2026-11-24T10:15:01.659Z" || !uuidForm.MatchString(first.TicketID) ||
		!reflect.DeepEqual(first.Players, []map[string]string{{"playerId": "player-1", "team": "red"}}) {
		t.Errorf("first ticket %+v", first)
	}

	ev, err := matchmaking.Decode(delivered(t, m))
	if err != nil || ev.Rejected != nil {
		t.Fatalf("the front door decodes it as %+v, %v", ev, err)
	}
	if ev.Match.ID != m.MatchID || ev.Players != 5 || len(ev.Match.TicketIDs) != 5 || ev.Match.ConfigurationArn != arn || ev.Custom.Region != "eu-central-1" {
		t.Errorf("decoded %+v", ev)
	}

	var players []allocation.PlayerLatency
	for i, tk := range m.Tickets {
		if tk.TicketID != detail.Tickets[i].TicketID || tk.Status != "COMPLETED" || tk.ConfigurationArn != arn || len(tk.Players) != 1 {
			t.Fatalf("stand-in ticket %d %+v", i, tk)
		}
		p := allocation.PlayerLatency{PlayerID: tk.Players[0].PlayerID, LatencyMs: map[string]float64{}}
		for region, ms := range tk.Players[0].LatencyInMs {
			if !strings.HasPrefix(region, "custom-") {
				t.Errorf("ticket %d reports %s; a game client reports custom regions as custom-<name>", i, region)
			}
			p.LatencyMs[region] = float64(ms)
		}
		players = append(players, p)
	}
	ranked, _ := allocation.RankRegions(players, 0)
	if len(ranked) != 2 || ranked[0].Region != "eu-central-1" || ranked[0].MaxMs >= ranked[1].AvgMs {
		t.Errorf("the players' latencies rank %v; want eu-central-1 first, clearly", ranked)
	}
}

func TestBuildMatchOptions(t *testing.T) {
	now := time.Now()
	m, err := BuildMatch(MatchOptions{}, []string{"us-west", "eu-central-1"}, now)
	if err != nil || len(m.Tickets) != DefaultPlayers || !strings.Contains(aws.ToString(m.Entry.Detail), `"customEventData":"{\"region\":\"us-west\"}"`) {
		t.Errorf("defaults: %+v, %v; want 4 players near the first region", m, err)
	}
	m, err = BuildMatch(MatchOptions{Players: 2, NoLatencies: true, CustomEventData: aws.String(""), Configuration: "ranked", MatchID: "m-1"}, nil, now)
	if err != nil || m.MatchID != "m-1" || strings.Contains(aws.ToString(m.Entry.Detail), "customEventData") ||
		!strings.HasSuffix(m.Entry.Resources[0], "/ranked") || len(m.Tickets[1].Players[0].LatencyInMs) != 0 {
		t.Errorf("no latencies, no customEventData: %+v, %v", m, err)
	}
	m, err = BuildMatch(MatchOptions{Players: 1, Near: "ap-south-1"}, []string{"us-west"}, now)
	if err != nil || len(m.Tickets[0].Players[0].LatencyInMs) != 2 || m.Tickets[0].Players[0].LatencyInMs["custom-ap-south-1"] > 60 {
		t.Errorf("near a region not listed: %+v, %v; want it reported too, and near", m.Tickets, err)
	}
	for _, n := range []int{-1, 201} {
		if _, err := BuildMatch(MatchOptions{Players: n}, nil, now); err == nil {
			t.Errorf("%d players accepted", n)
		}
	}
	if c := (&Components{}); c.MatchRegions() != nil {
		t.Error("regions without Allocators")
	}
}

func TestEventLineOfAMatch(t *testing.T) {
	p := Published{DetailType: "GameFabricMatchmakingSucceeded", Detail: json.RawMessage(
		`{"type":"GameFabricMatchmakingSucceeded","matchId":"m-1","idempotencyKey":"m-1:2:GameFabricMatchmakingSucceeded",` +
			`"gameSessionInfo":{"players":[],"ipAddress":"127.0.0.1","port":7001,"gameSessionArn":""}}`)}
	if got, want := EventLine(p), "event GameFabricMatchmakingSucceeded match m-1 at 127.0.0.1:7001 (m-1:2:GameFabricMatchmakingSucceeded)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p = Published{DetailType: "AllocationFailed", Detail: json.RawMessage(`{"gameInstanceId":"m-2","matchId":"m-2","state":"Failed","previousState":"Allocating","idempotencyKey":"k"}`)}
	if got, want := EventLine(p), "event AllocationFailed m-2 Allocating → Failed (k)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p = Published{DetailType: "GameLift Queue Placement Event", Detail: json.RawMessage(`{"placementId":"pl-1","type":"PlacementTimedOut","idempotencyKey":"k"}`)}
	if got, want := EventLine(p), "event GameLift Queue Placement Event placement pl-1 PlacementTimedOut (k)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
