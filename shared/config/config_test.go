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
	if c.AttemptTimeout != 10*time.Second || c.TokenCacheTTL != 5*time.Minute || c.LogLevel != slog.LevelInfo ||
		c.AllocationLease != time.Minute || c.RecordRetention != 7*24*time.Hour || c.MaxAllocationAttempts != 3 || c.MaxPlayerLatencyMs != 0 {
		t.Fatalf("defaults = %+v", c)
	}
	if got := c.AllocateURL(); got != "https://studio.gamefabric.dev/allocator/prod/us/allocate" {
		t.Fatalf("AllocateURL = %q", got)
	}
}

func TestLoadAllocateOverrides(t *testing.T) {
	m := valid()
	m["ALLOCATE_ATTEMPT_TIMEOUT"], m["LOG_LEVEL"], m["FALLBACK_REGION"] = "2s", "DEBUG", " US-West "
	c, err := LoadAllocate(env(m))
	if err != nil || c.AttemptTimeout != 2*time.Second || c.LogLevel != slog.LevelDebug || c.FallbackRegion != "us-west" {
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
		{"lease shorter than an attempt", map[string]string{"ALLOCATION_LEASE": "5s"}, []string{"ALLOCATION_LEASE (5s) must be longer"}},
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
