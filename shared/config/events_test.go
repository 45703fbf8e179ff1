package config

import (
	"log/slog"
	"strings"
	"testing"
)

func TestLoadEvents(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Events
		wantErr []string
	}{
		{"bus", map[string]string{"EVENT_BUS_NAME": "stack-game-server-events", "LOG_LEVEL": "debug"},
			Events{Bus: "stack-game-server-events", MatchmakingEventName: "GameFabricMatchmakingSucceeded", LogLevel: slog.LevelDebug}, nil},
		{"matches", map[string]string{"EVENT_BUS_NAME": "b", "MATCHES_TABLE": "m", "MATCHMAKING_EVENT_NAME": "MatchPlaced"},
			Events{Bus: "b", MatchesTable: "m", MatchmakingEventName: "MatchPlaced", LogLevel: slog.LevelInfo}, nil},
		{"bad event name", map[string]string{"EVENT_BUS_NAME": "b", "MATCHMAKING_EVENT_NAME": "has space"}, Events{}, []string{"MATCHMAKING_EVENT_NAME"}},
		{"every problem at once", map[string]string{"LOG_LEVEL": "loud"}, Events{}, []string{"EVENT_BUS_NAME", "LOG_LEVEL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadEvents(func(k string) string { return tt.env[k] })
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to name %s", err, w)
				}
			}
			if tt.wantErr == nil && (err != nil || got != tt.want) {
				t.Errorf("LoadEvents = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
