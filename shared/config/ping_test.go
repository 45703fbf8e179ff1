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
	c, err := LoadPingRefresh(env(map[string]string{
		"GAMEFABRIC_URL": "https://studio.gamefabric.dev", "ALLOCATOR_TOKEN_SECRET_ID": "alloc-secret",
		"PING_CACHE_TABLE": "Ping", "ZONES_BY_REGION": "us-west=US_WEST",
	}))
	if err != nil || c.TokenSecretID != "alloc-secret" || c.PingURL() != "https://studio.gamefabric.dev/ping" ||
		c.Period != time.Minute || c.ZonesByRegion["us-west"] != "US_WEST" {
		t.Fatalf("c = %+v, %v", c, err)
	}
	c, err = LoadPingRefresh(env(map[string]string{
		"GAMEFABRIC_URL": "https://x.dev", "ALLOCATOR_TOKEN_SECRET_ID": "alloc", "PING_TOKEN_SECRET_ID": "ping",
		"GAMEFABRIC_PING_PATH": "/pings/v1", "PING_CACHE_TABLE": "P", "PING_REFRESH_SCHEDULE": "rate(5 minutes)",
	}))
	if err != nil || c.TokenSecretID != "ping" || c.PingURL() != "https://x.dev/pings/v1" || c.Period != 5*time.Minute {
		t.Fatalf("c = %+v, %v", c, err)
	}
	_, err = LoadPingRefresh(env(map[string]string{"ZONES_BY_REGION": "broken", "PING_REFRESH_SCHEDULE": "cron(* * * * ? *)"}))
	for _, want := range []string{"GAMEFABRIC_URL is required", "PING_CACHE_TABLE is required", "ZONES_BY_REGION", "PING_REFRESH_SCHEDULE", "PING_TOKEN_SECRET_ID or ALLOCATOR_TOKEN_SECRET_ID"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to mention %q", err, want)
		}
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
