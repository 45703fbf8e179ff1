package config

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

func TestLoadMatchmaking(t *testing.T) {
	with := func(extra map[string]string) map[string]string {
		m := valid()
		maps.Copy(m, map[string]string{"MATCHES_TABLE": "Matches", "PLACEMENT_QUEUE_URL": "http://127.0.0.1:1/q"})
		maps.Copy(m, extra)
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		timeout time.Duration
		wantErr []string // each must be named, all in one error
	}{
		{"defaults: a match waits 60 s", with(nil), 60 * time.Second, nil},
		{"fail at once", with(map[string]string{"FLEXMATCH_QUEUE_TIMEOUT": "0s", "PLACEMENT_QUEUE_URL": ""}), 0, nil},
		{"longer than a placement may wait", with(map[string]string{"FLEXMATCH_QUEUE_TIMEOUT": "11m"}), 0, []string{"FLEXMATCH_QUEUE_TIMEOUT (11m0s) must be at most 10m0s"}},
		{"waiting without a queue", with(map[string]string{"PLACEMENT_QUEUE_URL": ""}), 0, []string{"FLEXMATCH_QUEUE_TIMEOUT (1m0s) needs PLACEMENT_QUEUE_URL"}},
		{"every problem at once", with(map[string]string{"MATCHES_TABLE": "", "GAME_INSTANCES_TABLE": "", "FLEXMATCH_QUEUE_TIMEOUT": "soon"}), 0,
			[]string{"MATCHES_TABLE", "GAME_INSTANCES_TABLE", "FLEXMATCH_QUEUE_TIMEOUT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadMatchmaking(env(tt.env))
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to name %s", err, w)
				}
			}
			if tt.wantErr == nil && (err != nil || c.MatchQueueTimeout != tt.timeout || c.TicketsTimeout != defaults.DescribeMatchmakingTimeout || c.MatchesTable != "Matches" || c.GameInstancesTable != "GameInstances") {
				t.Errorf("LoadMatchmaking = %+v, %v", c, err)
			}
		})
	}
}
