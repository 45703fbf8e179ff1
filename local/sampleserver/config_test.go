package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func minimalEnv(t *testing.T) map[string]string {
	return map[string]string{
		"ALLOC_URL":          "https://studio.gamefabric.dev/allocator/prod/us/servers",
		"ALLOC_REGION":       "us-west",
		"ALLOC_TOKEN":        "registry-secret",
		"ALLOC_PAYLOAD_FILE": filepath.Join(t.TempDir(), "payload.json"),
	}
}

func TestConfigDefaults(t *testing.T) {
	env := minimalEnv(t)
	c, err := configFromEnv(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		RegistryURL: env["ALLOC_URL"], Region: "us-west", RegistryToken: "registry-secret",
		Attributes: map[string]string{}, PayloadFile: env["ALLOC_PAYLOAD_FILE"], RegistryTimeout: 30 * time.Second,
		Host: "127.0.0.1", HealthPeriod: 30 * time.Second, MaxGameLength: 30 * time.Minute,
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
}

func TestConfigAll(t *testing.T) {
	env := minimalEnv(t)
	for k, v := range map[string]string{
		"ALLOC_URL": "http://127.0.0.1:9/servers/", "ALLOC_PRIORITY": "2", "ALLOC_TIMEOUT": "60",
		"ALLOC_ATTRIBUTES": " env=prag, armadaset=sample-game-armada-set ", "ALLOC_REQUIRED_ATTRS": "armadaset",
		"GAME_PORT": "7777", "ALLOC_PORT": "3999", "HOST": "127.0.0.2", "SERVER_NAME": "gs-1",
		"HEARTBEAT_INTERVAL": "2s", "MAX_GAME_LENGTH": "1h", "IDLE_SHUTDOWN": "90m", "ROOMS": "4", "SESSION_PORT": "7600",
	} {
		env[k] = v
	}
	c, err := configFromEnv(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if c.RegistryURL != "http://127.0.0.1:9/servers" || c.Priority != 2 || c.RegistryTimeout != time.Minute ||
		!reflect.DeepEqual(c.Attributes, map[string]string{"env": "prag", "armadaset": "sample-game-armada-set"}) ||
		!reflect.DeepEqual(c.RequiredAttrs, []string{"armadaset"}) || c.GamePort != 7777 || c.AllocPort != 3999 ||
		c.Host != "127.0.0.2" || c.ServerName != "gs-1" || c.HeartbeatInterval != 2*time.Second ||
		c.MaxGameLength != time.Hour || c.IdleShutdown != 90*time.Minute || c.Rooms != 4 || c.SessionPort != 7600 {
		t.Fatalf("unexpected config %+v", c)
	}
}

func TestConfigRooms(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int    // Rooms
		err  string // "" = valid
	}{
		{"unset: dedicated", nil, 0, ""},
		{"1: dedicated", map[string]string{"ROOMS": "1"}, 0, ""},
		{"two", map[string]string{"ROOMS": " 2 "}, 2, ""},
		{"the most", map[string]string{"ROOMS": "256"}, 256, ""},
		{"with its ports", map[string]string{"ROOMS": "4", "GAME_PORT": "7777", "ALLOC_PORT": "3999", "SESSION_PORT": "7600"}, 4, ""},
		{"zero", map[string]string{"ROOMS": "0"}, 0, `ROOMS must be an integer from 2 to 256 (sessions hosted at once), or 1 or unset for a dedicated server, got "0"`},
		{"too many", map[string]string{"ROOMS": "257"}, 0, `ROOMS must be an integer from 2 to 256`},
		{"negative", map[string]string{"ROOMS": "-4"}, 0, `got "-4"`},
		{"not a number", map[string]string{"ROOMS": "four"}, 0, `got "four"`},
		{"session port out of range", map[string]string{"ROOMS": "4", "SESSION_PORT": "65536"}, 0, "SESSION_PORT must be an integer from 0 to 65535"},
		{"session port is the game port", map[string]string{"ROOMS": "4", "GAME_PORT": "7777", "SESSION_PORT": "7777"}, 0,
			"SESSION_PORT must differ from GAME_PORT and ALLOC_PORT"},
		{"session port is the alloc port", map[string]string{"ALLOC_PORT": "3999", "SESSION_PORT": "3999"}, 0,
			"SESSION_PORT must differ from GAME_PORT and ALLOC_PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := minimalEnv(t)
			for k, v := range tc.env {
				env[k] = v
			}
			c, err := configFromEnv(envOf(env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || c.Rooms != tc.want {
				t.Fatalf("Rooms %d, %v; want %d", c.Rooms, err, tc.want)
			}
		})
	}
}

// Unless set, the heartbeat interval is left to the SDK, which follows the
// backend's answers; a set one longer than HEALTH_PERIOD is refused.
func TestConfigHeartbeatInterval(t *testing.T) {
	for _, tc := range []struct {
		period, interval string
		want             time.Duration
	}{
		{"", "", 0},
		{"1m", "", 0},
		{"1m", "1m", time.Minute},
		{"", "300ms", 300 * time.Millisecond},
	} {
		env := minimalEnv(t)
		env["HEALTH_PERIOD"], env["HEARTBEAT_INTERVAL"] = tc.period, tc.interval
		c, err := configFromEnv(envOf(env))
		if err != nil || c.HeartbeatInterval != tc.want {
			t.Errorf("HEALTH_PERIOD=%q HEARTBEAT_INTERVAL=%q: %v, %v; want %s", tc.period, tc.interval, c.HeartbeatInterval, err, tc.want)
		}
	}
}

func TestConfigDefaultPayloadFileIsInWorkingDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	env := minimalEnv(t)
	delete(env, "ALLOC_PAYLOAD_FILE")
	c, err := configFromEnv(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "payload.json"); c.PayloadFile != want {
		t.Fatalf("payload file %q, want %q", c.PayloadFile, want)
	}
}

func TestConfigInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"no url", "ALLOC_URL", "", "ALLOC_URL is required"},
		{"url not /servers", "ALLOC_URL", "https://x/allocator/prod/us/allocate", "ending in /servers"},
		{"url scheme", "ALLOC_URL", "ftp://x/servers", "ALLOC_URL must be"},
		{"no region", "ALLOC_REGION", " ", "ALLOC_REGION is required"},
		{"no token", "ALLOC_TOKEN", "", "ALLOC_TOKEN is required"},
		{"priority", "ALLOC_PRIORITY", "high", "ALLOC_PRIORITY must be an integer"},
		{"timeout zero", "ALLOC_TIMEOUT", "0", "ALLOC_TIMEOUT must be an integer from 1"},
		{"timeout duration", "ALLOC_TIMEOUT", "30s", "ALLOC_TIMEOUT must be an integer"},
		{"attribute", "ALLOC_ATTRIBUTES", "env", `"env" is not key=value`},
		{"duplicate attribute", "ALLOC_ATTRIBUTES", "env=a,env=b", `key "env" appears twice`},
		{"required not carried", "ALLOC_REQUIRED_ATTRS", "env", `"env" is not a key of ALLOC_ATTRIBUTES`},
		{"payload dir", "ALLOC_PAYLOAD_FILE", "/does/not/exist/payload.json", "directory /does/not/exist does not exist"},
		{"port", "GAME_PORT", "70000", "GAME_PORT must be an integer from 0 to 65535"},
		{"host name", "HOST", "localhost", "HOST must be a specific IP address"},
		{"host wildcard", "HOST", "0.0.0.0", "HOST must be a specific IP address"},
		{"server name", "SERVER_NAME", "two words", "SERVER_NAME must be"},
		{"heartbeat", "HEARTBEAT_INTERVAL", "10", "HEARTBEAT_INTERVAL must be a positive duration"},
		{"heartbeat slower than the period", "HEARTBEAT_INTERVAL", "31s", "HEARTBEAT_INTERVAL (31s) must be at most HEALTH_PERIOD (30s)"},
		{"health period", "HEALTH_PERIOD", "0s", "HEALTH_PERIOD must be a positive duration"},
		{"max length zero", "MAX_GAME_LENGTH", "0s", "MAX_GAME_LENGTH must be a positive duration"},
		{"idle negative", "IDLE_SHUTDOWN", "-1s", "IDLE_SHUTDOWN must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := minimalEnv(t)
			env[tc.key] = tc.value
			_, err := configFromEnv(envOf(env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigReportsEveryProblemAtOnce(t *testing.T) {
	_, err := configFromEnv(envOf(map[string]string{"GAME_PORT": "x", "ALLOC_PORT": "y"}))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"ALLOC_URL", "ALLOC_REGION", "ALLOC_TOKEN", "GAME_PORT", "ALLOC_PORT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Count(err.Error(), "invalid configuration") != 1 {
		t.Errorf("want one error, got %q", err)
	}
}
