package config

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

func TestLoadGameLiftAPI(t *testing.T) {
	with := func(extra map[string]string) map[string]string {
		m := valid()
		maps.Copy(m, map[string]string{"GAME_SESSION_PLACEMENTS_TABLE": "Placements", "PLACEMENT_QUEUE_URL": "http://127.0.0.1:1/q",
			"GAMELIFT_API_KEYS_SECRET_ID": "arn:keys",
			"GAMELIFT_QUEUES": `{"arena": {"regions": ["US-West", "eu-central-1"], "gameServerVersion": "prag::arena",
			  "playerLatencyPolicies": [{"maximumIndividualPlayerLatencyMilliseconds": 50, "policyDurationSeconds": 10},
			                            {"maximumIndividualPlayerLatencyMilliseconds": 100}]},
			  "quick": {"regions": ["us-west"], "timeoutSeconds": 30}}`})
		maps.Copy(m, extra)
		return m
	}
	queues := func(q string) map[string]string { return with(map[string]string{"GAMELIFT_QUEUES": q}) }
	tests := []struct {
		name    string
		env     map[string]string
		wantErr []string // each must be named, all in one error
	}{
		{"valid", with(nil), nil},
		{"unset: the default queue", with(map[string]string{"GAMELIFT_QUEUES": "", "FALLBACK_REGION": "us-west"}), []string{}},
		{"not JSON", queues(`arena`), []string{"GAMELIFT_QUEUES must be a JSON object"}},
		{"no queue", queues(`{}`), []string{"GAMELIFT_QUEUES must be a JSON object of at least one queue"}},
		{"unknown field", queues(`{"a": {"regions": ["us-west"], "timeout": 5}}`), []string{`unknown field "timeout"`}},
		{"bad name, regions and timeout", queues(`{"a.b": {"regions": ["us-west", "us-west"], "timeoutSeconds": 601}}`),
			[]string{`queue "a.b": its name`, "regions must be distinct", "timeoutSeconds must be 1-600"}},
		{"no regions", queues(`{"a": {"regions": []}}`), []string{"regions must list 1-10 regions"}},
		{"policies that tighten", queues(`{"a": {"regions": ["us-west"], "playerLatencyPolicies": [
			{"maximumIndividualPlayerLatencyMilliseconds": 100, "policyDurationSeconds": 5}, {"maximumIndividualPlayerLatencyMilliseconds": 50}]}}`),
			[]string{"playerLatencyPolicies[1] must allow more latency"}},
		{"a duration missing before the last", queues(`{"a": {"regions": ["us-west"], "playerLatencyPolicies": [
			{"maximumIndividualPlayerLatencyMilliseconds": 50}, {"maximumIndividualPlayerLatencyMilliseconds": 100}]}}`),
			[]string{"playerLatencyPolicies[0].policyDurationSeconds"}},
		{"every problem at once", with(map[string]string{"GAME_SESSION_PLACEMENTS_TABLE": "", "GAMELIFT_API_KEYS_SECRET_ID": "",
			"PLACEMENT_QUEUE_URL": "", "GAME_INSTANCES_TABLE": "", "GAMELIFT_QUEUES": "", "FALLBACK_REGION": ""}),
			[]string{"GAME_SESSION_PLACEMENTS_TABLE", "GAMELIFT_API_KEYS_SECRET_ID", "PLACEMENT_QUEUE_URL", "GAME_INSTANCES_TABLE", "GAMELIFT_QUEUES is required when FALLBACK_REGION"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadGameLiftAPI(env(tt.env))
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to name %s", err, w)
				}
			}
			if tt.wantErr != nil {
				if q := c.Queues[DefaultGameLiftQueue]; len(tt.wantErr) == 0 && (err != nil || len(c.Queues) != 1 || len(q.Regions) != 1 || q.Timeout != defaults.GameLiftQueueTimeout) {
					t.Errorf("the default queue: %+v, %v", c.Queues, err)
				}
				return
			}
			arena, quick := c.Queues["arena"], c.Queues["quick"]
			if err != nil || c.PlacementsTable != "Placements" || strings.Join(arena.Regions, ",") != "us-west,eu-central-1" ||
				arena.Timeout != defaults.GameLiftQueueTimeout || quick.Timeout != 30*time.Second || len(arena.LatencyPolicies) != 2 ||
				arena.LatencyPolicies[1].DurationSeconds != 0 || arena.GameServerVersion != "prag::arena" {
				t.Errorf("LoadGameLiftAPI = %+v, %v", c, err)
			}
		})
	}
}
