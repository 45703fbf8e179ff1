package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func valid() map[string]string {
	return map[string]string{
		"GAMEFABRIC_URL":            "https://studio.gamefabric.dev/",
		"GAMEFABRIC_ALLOCATE_PATH":  "/allocator/prod/us/allocate",
		"ALLOCATOR_TOKEN_SECRET_ID": "arn:aws:secretsmanager:us-east-1:1:secret:x",
		"BACKEND_ADDRESS":           "https://backend.example",
		"GAME_INSTANCES_TABLE":      "GameInstances",
	}
}

func TestLoadAllocateDefaults(t *testing.T) {
	c, err := LoadAllocate(env(valid()))
	if err != nil {
		t.Fatal(err)
	}
	if c.Allocation.AttemptTimeout != 10*time.Second || c.TokenCacheTTL != 5*time.Minute || c.LogLevel != slog.LevelInfo ||
		c.Allocation.Lease != time.Minute || c.Allocation.Retention != 7*24*time.Hour || c.Request.MaxAttempts != 3 || c.Request.MaxPlayerLatencyMs != 0 ||
		c.Allocation.Budget != 25*time.Second || c.GameServersTable != "" || c.RoomCallbackTimeout != 2*time.Second {
		t.Fatalf("defaults = %+v", c)
	}
	if got := c.AllocateURL(); got != "https://studio.gamefabric.dev/allocator/prod/us/allocate" {
		t.Fatalf("AllocateURL = %q", got)
	}
}

func TestLoadAllocateAllowsPlainHTTPOnLoopback(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:7400", "http://localhost:7400", "http://[::1]:7400", "http://127.1.2.3"} {
		m := valid()
		m["GAMEFABRIC_URL"], m["BACKEND_ADDRESS"] = u, u
		if _, err := LoadAllocate(env(m)); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestLoadAllocateOverrides(t *testing.T) {
	m := valid()
	m["ALLOCATE_ATTEMPT_TIMEOUT"], m["LOG_LEVEL"], m["FALLBACK_REGION"] = "2s", "DEBUG", " US-West "
	c, err := LoadAllocate(env(m))
	if err != nil || c.Allocation.AttemptTimeout != 2*time.Second || c.LogLevel != slog.LevelDebug || c.Request.Region != "us-west" {
		t.Fatalf("c = %+v, %v", c, err)
	}
}

func TestLoadAllocateListsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		set  map[string]string
		want []string
	}{
		{"nothing set", map[string]string{"GAMEFABRIC_URL": "", "GAMEFABRIC_ALLOCATE_PATH": "", "ALLOCATOR_TOKEN_SECRET_ID": "", "BACKEND_ADDRESS": "", "GAME_INSTANCES_TABLE": ""},
			[]string{"GAMEFABRIC_URL is required", "GAMEFABRIC_ALLOCATE_PATH is required", "ALLOCATOR_TOKEN_SECRET_ID is required", "BACKEND_ADDRESS is required", "GAME_INSTANCES_TABLE is required"}},
		{"bad values", map[string]string{"GAMEFABRIC_URL": "studio.gamefabric.dev", "ALLOCATE_ATTEMPT_TIMEOUT": "10", "LOG_LEVEL": "loud", "TOKEN_CACHE_TTL": "-1m"},
			[]string{"GAMEFABRIC_URL must be an absolute", "ALLOCATE_ATTEMPT_TIMEOUT must be a positive", "LOG_LEVEL must be one of", "TOKEN_CACHE_TTL must be a positive"}},
		{"lease shorter than the budget", map[string]string{"ALLOCATION_LEASE": "20s"}, []string{"ALLOCATION_LEASE (20s) must be longer than ALLOCATION_BUDGET (25s)"}},
		{"budget outside the gateway's 30 s", map[string]string{"ALLOCATION_BUDGET": "30s", "ALLOCATION_LEASE": "60s"}, []string{"ALLOCATION_BUDGET (30s) must be between 5s and 29s"}},
		{"budget without room for an attempt", map[string]string{"ALLOCATION_BUDGET": "3s"}, []string{"ALLOCATION_BUDGET (3s) must be between"}},
		{"retention shorter than a claim's doubt", map[string]string{"RECORD_RETENTION": "2m"}, []string{"RECORD_RETENTION (2m0s) must be at least ALLOCATION_LEASE + LINK_TIMEOUT (3m0s)"}},
		{"too many regions", map[string]string{"MAX_ALLOCATION_ATTEMPTS": "11"}, []string{"MAX_ALLOCATION_ATTEMPTS must be at most 10"}},
		{"plain http to a remote host", map[string]string{"GAMEFABRIC_URL": "http://studio.gamefabric.dev", "BACKEND_ADDRESS": "http://10.0.0.5:8080"},
			[]string{"GAMEFABRIC_URL must be an https:// URL", "BACKEND_ADDRESS must be an https:// URL"}},
		{"a callback longer than the budget allows", map[string]string{"ALLOCATION_BUDGET": "5s", "ROOM_CALLBACK_TIMEOUT": "2s"},
			[]string{"ROOM_CALLBACK_TIMEOUT (2s) must be at most 1.5s"}},
		{"a callback timeout that is no duration", map[string]string{"ROOM_CALLBACK_TIMEOUT": "2"}, []string{"ROOM_CALLBACK_TIMEOUT must be a positive"}},
		{"region selection limits", map[string]string{"MAX_ALLOCATION_ATTEMPTS": "0", "MAX_PLAYER_LATENCY_MS": "fast"}, []string{"MAX_ALLOCATION_ATTEMPTS must be", "MAX_PLAYER_LATENCY_MS must be"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			for k, v := range tc.set {
				m[k] = v
			}
			_, err := LoadAllocate(env(m))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestLoadAllocateFallbackRegion(t *testing.T) {
	tests := []struct{ value, want, problem string }{
		{" US-West ", "us-west", ""},
		{"", "", ""},
		{"us west", "", "FALLBACK_REGION must be a region name"},
	}
	for _, tc := range tests {
		m := valid()
		m["FALLBACK_REGION"] = tc.value
		c, err := LoadAllocate(env(m))
		if tc.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%q: err = %v, want %q", tc.value, err, tc.problem)
			}
			continue
		}
		if err != nil || c.Request.Region != tc.want {
			t.Errorf("%q: FallbackRegion = %q, %v; want %q", tc.value, c.Request.Region, err, tc.want)
		}
	}
}
