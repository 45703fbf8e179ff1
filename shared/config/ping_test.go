package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := map[string]time.Duration{
		"rate(1 minute)": time.Minute, "rate(5 minutes)": 5 * time.Minute, "rate(2 hours)": 2 * time.Hour,
		"rate(1 day)": 24 * time.Hour, " rate(10 minutes) ": 10 * time.Minute,
		"rate(0 minutes)": 0, "rate(1 minutes)": 0, "rate(5 minute)": 0, "cron(0 * * * ? *)": 0, "rate(1 second)": 0, "1m": 0,
	}
	for in, want := range tests {
		got, err := ParseRate(in)
		if got != want || (want == 0) != (err != nil) {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestParseZones(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "", want: map[string]string{}},
		{in: "us-west=US_WEST, EU-Central-1=EU_CENTRAL,", want: map[string]string{"us-west": "US_WEST", "eu-central-1": "EU_CENTRAL"}},
		{in: "us-west", wantErr: "not region=ZONE"},
		{in: "us-west=", wantErr: "not region=ZONE"},
		{in: "a=X,a=Y", wantErr: "mapped twice"},
	}
	for _, tc := range tests {
		got, err := ParseZones(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseZones(%q) err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseZones(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestLoadPingRefresh(t *testing.T) {
	base := map[string]string{"PING_TOKEN_SECRET_ID": "ping-secret", "PING_CACHE_TABLE": "Ping"}
	tests := []struct {
		name     string
		env      map[string]string
		wantURL  string
		wantErrs []string
	}{
		{name: "own Ping Service URL, no GameFabric URL needed",
			env:     map[string]string{"GAMEFABRIC_PING_URL": "https://ping.example.gamefabric.dev/discovery"},
			wantURL: "https://ping.example.gamefabric.dev/discovery"},
		{name: "own URL wins over base URL and path, which are not even checked",
			env:     map[string]string{"GAMEFABRIC_PING_URL": " https://ping.example/v1 ", "GAMEFABRIC_URL": "not-a-url", "GAMEFABRIC_PING_PATH": "pings"},
			wantURL: "https://ping.example/v1"},
		{name: "own URL on loopback may be http", env: map[string]string{"GAMEFABRIC_PING_URL": "http://127.0.0.1:9000/ping"},
			wantURL: "http://127.0.0.1:9000/ping"},
		{name: "no own URL: base URL and default path", env: map[string]string{"GAMEFABRIC_URL": "https://studio.gamefabric.dev/"},
			wantURL: "https://studio.gamefabric.dev/ping"},
		{name: "no own URL: base URL and path", env: map[string]string{"GAMEFABRIC_URL": "https://x.dev", "GAMEFABRIC_PING_PATH": "/pings/v1"},
			wantURL: "https://x.dev/pings/v1"},
		{name: "own URL must be https off loopback", env: map[string]string{"GAMEFABRIC_PING_URL": "http://ping.example/v1"},
			wantErrs: []string{"GAMEFABRIC_PING_URL must be an https:// URL"}},
		{name: "own URL must be a URL", env: map[string]string{"GAMEFABRIC_PING_URL": "ping.example"},
			wantErrs: []string{"GAMEFABRIC_PING_URL must be an absolute http(s) URL"}},
		{name: "base URL checked when it is used", env: map[string]string{"GAMEFABRIC_URL": "ftp://x"},
			wantErrs: []string{"GAMEFABRIC_URL must be an absolute http(s) URL"}},
		{name: "no fallback to the allocator's secret",
			env:      map[string]string{"GAMEFABRIC_PING_URL": "https://p.dev", "PING_TOKEN_SECRET_ID": "", "ALLOCATOR_TOKEN_SECRET_ID": "alloc-secret"},
			wantErrs: []string{"PING_TOKEN_SECRET_ID is required"}},
		{name: "every problem at once",
			env: map[string]string{"PING_TOKEN_SECRET_ID": "", "PING_CACHE_TABLE": "", "ZONES_BY_REGION": "broken", "PING_REFRESH_SCHEDULE": "cron(* * * * ? *)"},
			wantErrs: []string{"GAMEFABRIC_PING_URL (or GAMEFABRIC_URL", "PING_TOKEN_SECRET_ID is required", "PING_CACHE_TABLE is required",
				"ZONES_BY_REGION", "PING_REFRESH_SCHEDULE"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{}
			for k, v := range base {
				vars[k] = v
			}
			for k, v := range tc.env {
				vars[k] = v
			}
			c, err := LoadPingRefresh(env(vars))
			if tc.wantErrs == nil {
				if err != nil || c.PingURL() != tc.wantURL || c.TokenSecretID != "ping-secret" || c.Table != "Ping" || c.Period != time.Minute {
					t.Fatalf("c = %+v (URL %q), %v; want URL %q", c, c.PingURL(), err, tc.wantURL)
				}
				return
			}
			for _, want := range tc.wantErrs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to mention %q", err, want)
				}
			}
			if err != nil && strings.Count(err.Error(), ";")+1 != len(tc.wantErrs) {
				t.Errorf("err = %v, want exactly %d problems", err, len(tc.wantErrs))
			}
		})
	}
	c, err := LoadPingRefresh(env(map[string]string{"GAMEFABRIC_PING_URL": "https://p.dev", "PING_TOKEN_SECRET_ID": "s", "PING_CACHE_TABLE": "P",
		"ZONES_BY_REGION": "us-west=US_WEST", "PING_REFRESH_SCHEDULE": "rate(5 minutes)",
		"GAMEFABRIC_ALLOCATORS": `{"US-Metal": {"kind": "agones", "url": "https://a"}, "eu": {"url": "https://e"}, "ap-metal": {"kind": "agones"}}`}))
	if err != nil || c.ZonesByRegion["us-west"] != "US_WEST" || c.Period != 5*time.Minute || strings.Join(c.AgonesRegions, ",") != "ap-metal,us-metal" {
		t.Fatalf("c = %+v, %v", c, err)
	}
	if _, err := LoadPingRefresh(env(map[string]string{"GAMEFABRIC_PING_URL": "https://p.dev", "PING_TOKEN_SECRET_ID": "s", "PING_CACHE_TABLE": "P",
		"GAMEFABRIC_ALLOCATORS": `[]`})); err == nil || !strings.Contains(err.Error(), "GAMEFABRIC_ALLOCATORS must be a JSON object") {
		t.Fatalf("a malformed GAMEFABRIC_ALLOCATORS: %v", err)
	}
}

func TestLoadRegions(t *testing.T) {
	if _, err := LoadRegions(env(nil)); err == nil || !strings.Contains(err.Error(), "PING_CACHE_TABLE is required") {
		t.Fatalf("err = %v", err)
	}
	c, err := LoadRegions(env(map[string]string{"PING_CACHE_TABLE": "P"}))
	if err != nil || c.Period != time.Minute {
		t.Fatalf("c = %+v, %v", c, err)
	}
}
