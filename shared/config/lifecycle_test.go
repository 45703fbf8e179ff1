package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadLifecycle(t *testing.T) {
	c, err := LoadLifecycle(env(map[string]string{"GAME_INSTANCES_TABLE": "T"}))
	if err != nil || c.Health.LinkTimeout != 2*time.Minute || c.Health.Period != 30*time.Second || c.Health.FailureThreshold != 3 ||
		c.Health.InitialDelay != 30*time.Second || c.Health.Retention != 7*24*time.Hour {
		t.Fatalf("defaults = %+v, %v", c, err)
	}
	c, err = LoadLifecycle(env(map[string]string{"GAME_INSTANCES_TABLE": "T", "HEALTH_INITIAL_DELAY": "0s", "HEALTH_FAILURE_THRESHOLD": "5"}))
	if err != nil || c.Health.InitialDelay != 0 || c.Health.FailureThreshold != 5 {
		t.Fatalf("overrides = %+v, %v", c, err)
	}
	_, err = LoadLifecycle(env(map[string]string{"HEALTH_FAILURE_THRESHOLD": "0", "HEALTH_INITIAL_DELAY": "-1s", "LINK_TIMEOUT": "2"}))
	for _, want := range []string{"GAME_INSTANCES_TABLE is required", "HEALTH_FAILURE_THRESHOLD must be", "HEALTH_INITIAL_DELAY must be", "LINK_TIMEOUT must be"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestGameServerEndpointSetsTheHeartbeatInterval(t *testing.T) {
	tests := []struct {
		endpoint, period string
		want             time.Duration
		problem          string
	}{
		{"", "", 30 * time.Second, ""},
		{"FunctionUrl", "1m", time.Minute, ""},
		{"HttpApi", "", 10 * time.Second, ""},
		{"HttpApi", "45s", 15 * time.Second, ""},
		{"httpapi", "", 0, `GAME_SERVER_ENDPOINT must be FunctionUrl or HttpApi, got "httpapi"`},
	}
	for _, tc := range tests {
		c, err := LoadLifecycle(env(map[string]string{"GAME_INSTANCES_TABLE": "T", "GAME_SERVER_ENDPOINT": tc.endpoint, "HEALTH_PERIOD": tc.period}))
		switch {
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
			t.Errorf("%q: err = %v, want %q", tc.endpoint, err, tc.problem)
		case tc.problem == "" && (err != nil || c.HeartbeatInterval != tc.want):
			t.Errorf("%q %q: interval %v (%v), want %v", tc.endpoint, tc.period, c.HeartbeatInterval, err, tc.want)
		}
	}
}
