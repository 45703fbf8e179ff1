package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestPlayMatch(t *testing.T) {
	var played []stack.MatchOptions
	d := newDash(t, Sources{PlayMatch: func(_ context.Context, o stack.MatchOptions) (string, error) {
		if o.Near == "moon" {
			return "", errors.New("moto is gone")
		}
		played = append(played, o)
		return "5c8d4a6e-0d1f-4b6e-9a57-3f2d1e6c9a01", nil
	}})
	tests := []struct {
		name, body string
		wantStatus int
		wantMsg    string
		want       *stack.MatchOptions
	}{
		{"defaults", `{}`, 200, "match 5c8d4a6e-0d1f-4b6e-9a57-3f2d1e6c9a01 of 4 players is on the default bus", &stack.MatchOptions{Players: 4}},
		{"near a region", `{"players":6,"near":" eu-central-1 "}`, 200, "of 6 players near eu-central-1", &stack.MatchOptions{Players: 6, Near: "eu-central-1"}},
		{"too many players", `{"players":201}`, 400, "1 to 200 players", nil},
		{"unknown field", `{"player":4}`, 400, "unknown field", nil},
		{"bus down", `{"near":"moon"}`, 502, "moto is gone", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			played = nil
			rec, doc := do(t, d, http.MethodPost, "/api/match", tt.body)
			if rec.Code != tt.wantStatus || !strings.Contains(fmt.Sprint(doc["message"]), tt.wantMsg) || doc["ok"] != (tt.wantStatus == 200) {
				t.Fatalf("%d %v", rec.Code, doc)
			}
			if tt.want == nil {
				if len(played) != 0 && tt.wantStatus == 400 {
					t.Errorf("played %+v", played)
				}
				return
			}
			if len(played) != 1 || played[0].Players != tt.want.Players || played[0].Near != tt.want.Near || played[0].CustomEventData != nil {
				t.Errorf("played %+v, want %+v", played, *tt.want)
			}
			if doc["gameInstanceId"] != "5c8d4a6e-0d1f-4b6e-9a57-3f2d1e6c9a01" {
				t.Errorf("answer names %v, want the match's id", doc["gameInstanceId"])
			}
		})
	}

	// Another site cannot play a match for the developer.
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8089/api/match", strings.NewReader(`{}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Origin", "http://evil.example")
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, r)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a cross-site match: %d", rec.Code)
	}

	if rec, _ := do(t, newDash(t, Sources{}), http.MethodPost, "/api/match", `{}`); rec.Code != http.StatusNotImplemented {
		t.Errorf("without PlayMatch: %d", rec.Code)
	}
}

// The state says whether a match can be played, marks a match's instance
// and shows its published-again event with where its players connect.
func TestStateShowsMatches(t *testing.T) {
	src := Sources{
		PlayMatch: func(context.Context, stack.MatchOptions) (string, error) { return "", nil },
		Instances: func(context.Context) (instanceListing, error) {
			return instanceListing{Records: []gameinstance.Record{{GameInstanceID: "m-1", State: gameinstance.StateAllocated,
				Fingerprint: gameinstance.Fingerprint{Match: true}}}}, nil
		},
		Events: func() []stack.SeenEvent {
			return []stack.SeenEvent{{Seq: 1, Published: stack.Published{DetailType: "GameFabricMatchmakingSucceeded", Source: stack.EventsSource,
				Detail: json.RawMessage(`{"type":"GameFabricMatchmakingSucceeded","matchId":"m-1","gameSessionInfo":{"ipAddress":"127.0.0.1","port":7001}}`)}}}
		},
	}
	rec, _ := do(t, newDash(t, src), http.MethodGet, "/api/state", "")
	var st State
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if !st.PlayMatch || len(st.Instances) != 1 || !st.Instances[0].Match {
		t.Errorf("state %+v", st)
	}
	if len(st.Events) != 1 || st.Events[0].GameInstanceID != "m-1" || st.Events[0].MatchID != "m-1" || st.Events[0].Address != "127.0.0.1:7001" {
		t.Errorf("events %+v", st.Events)
	}
	src.PlayMatch = nil
	rec, _ = do(t, newDash(t, src), http.MethodGet, "/api/state", "")
	if strings.Contains(rec.Body.String(), `"playMatch":true`) {
		t.Error("a dashboard that cannot play matches offers to")
	}
}
