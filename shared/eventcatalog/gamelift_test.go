package eventcatalog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestQueuePlacement(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	p := gameinstance.GameSessionPlacement{ID: "pl-1", GameSessionArn: "arn:aws:gamelift:eu-west-1::gamesession/fleet-gamefabric/pl-1",
		QueueArn: "arn:aws:gamelift:eu-west-1:123456789012:gamesessionqueue/arena",
		Session:  gameinstance.GameSession{DesiredPlayerSessions: []gameinstance.PlayerSession{{PlayerID: "p1"}}}}
	rec := func(state gameinstance.State, code gameinstance.Code) gameinstance.Record {
		r := gameinstance.Record{GameInstanceID: "pl-1", State: state, Version: 3, CreatedAt: start, UpdatedAt: start.Add(3 * time.Second),
			Fingerprint: gameinstance.Fingerprint{GameLift: "d"}}
		if code != "" {
			r.Failure = &gameinstance.Failure{Code: code}
		}
		if state == gameinstance.StateAllocated {
			r.Region, r.Server = "us-west", &gameinstance.Server{Address: "203.0.113.7:7777", IP: "203.0.113.7", Ports: map[string]int{"game": 7777}}
		}
		return r
	}
	queued := rec(gameinstance.StateQueued, "")
	tests := []struct {
		name string
		old  *gameinstance.Record
		cur  gameinstance.Record
		want string // the detail's fields that matter, "" = no placement event
	}{
		{"fulfilled", &queued, rec(gameinstance.StateAllocated, ""),
			`"placementId":"pl-1","port":"7777","gameSessionArn":"arn:aws:gamelift:eu-west-1::gamesession/fleet-gamefabric/pl-1","ipAddress":"203.0.113.7","dnsName":"203.0.113.7","startTime":"2026-11-29T12:00:00Z","endTime":"2026-11-29T12:00:03Z","gameSessionRegion":"us-west","placedPlayerSessions":[{"playerId":"p1","playerSessionId":"psess-`},
		{"timed out", &queued, rec(gameinstance.StateFailed, gameinstance.CodePlacementTimedOut), `"type":"PlacementTimedOut"`},
		{"cancelled", &queued, rec(gameinstance.StateFailed, gameinstance.CodePlacementCancelled), `"endTime":"2026-11-29T12:00:03Z","type":"PlacementCancelled"`},
		{"failed", nil, rec(gameinstance.StateFailed, gameinstance.CodeAllocationFailed), `"type":"PlacementFailed","idempotencyKey":"pl-1:3:GameLift Queue Placement Event"`},
		{"no capacity within the queue's time: timed out", nil, rec(gameinstance.StateFailed, gameinstance.CodeNoCapacity), `"type":"PlacementTimedOut"`},
		{"queued: not yet", nil, queued, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range FromGameInstance(tt.old, tt.cur) {
				if e.Instance.PlacementID != "pl-1" {
					t.Errorf("%s lacks placementId", e.Type)
				}
				if ev, ok := QueuePlacement(p, e, false); ok {
					b, _ := ev.Detail()
					got = append(got, string(b))
					if ev.Type != GameLiftQueuePlacement || len(ev.Resources) != 1 || ev.Key() != "pl-1:3:GameLift Queue Placement Event" || !ev.Time.Equal(tt.cur.UpdatedAt) {
						t.Errorf("event %+v", ev)
					}
					var d map[string]any
					_ = json.Unmarshal(b, &d)
					if _, ok := d["port"].(string); tt.name == "fulfilled" && !ok {
						t.Errorf("port is not a string: %s", b)
					}
				}
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("a placement event for %s: %v", tt.name, got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("got %v, want one with %s", got, tt.want)
			}
		})
	}
}
