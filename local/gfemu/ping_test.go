package gfemu

import (
	"net/http"
	"testing"
	"time"
)

func TestPing(t *testing.T) {
	tests := []struct {
		name     string
		register []string
		advance  time.Duration
		want     string
	}{
		{name: "no servers", want: `{"regions":{}}` + "\n"},
		{name: "ping port, else game port, else address port; deduplicated; sorted",
			register: []string{
				`{"address":"10.0.0.2:7001","priority":0,"region":"us-west","ports":{"game":7001,"ping":7600}}`,
				`{"address":"10.0.0.2:7002","priority":0,"region":"us-west","ports":{"game":7002,"ping":7600}}`,
				`{"address":"10.0.0.1:7003","priority":0,"region":"us-west","ports":{"game":7777}}`,
				`{"address":"10.0.0.9:7004","priority":0,"region":"eu-central"}`,
				`{"address":"10.0.0.8:7005","priority":0}`,
			},
			want: `{"regions":{"eu-central":[{"address":"10.0.0.9","port":7004,"protocol":"udp"}],` +
				`"us-west":[{"address":"10.0.0.1","port":7777,"protocol":"udp"},{"address":"10.0.0.2","port":7600,"protocol":"udp"}]}}` + "\n"},
		{name: "expired servers are not listed",
			register: []string{
				`{"address":"10.0.0.1:1","priority":0,"region":"a","timeout":5}`,
				`{"address":"10.0.0.2:1","priority":0,"region":"b","timeout":50}`,
			},
			advance: 10 * time.Second,
			want:    `{"regions":{"b":[{"address":"10.0.0.2","port":1,"protocol":"udp"}]}}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			for _, b := range tc.register {
				f.mustRegister(b)
			}
			f.clock.Advance(tc.advance)
			r := f.do(http.MethodGet, "/ping", allocTok, "")
			if r.status != http.StatusOK || string(r.body) != tc.want {
				t.Fatalf("ping = %d %s, want %s", r.status, r.body, tc.want)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
		})
	}
}

func TestPingOmitsAllocatedServers(t *testing.T) {
	f := newFixture(t, nil)
	f.mustRegister(`{"address":"10.0.0.1:1","priority":0,"region":"r"}`)
	f.mustRegister(`{"address":"10.0.0.2:1","priority":1,"region":"r"}`)
	if r := f.allocate(`{"region":"r"}`); r.status != http.StatusOK {
		t.Fatalf("allocate = %d %s", r.status, r.body)
	}
	want := `{"regions":{"r":[{"address":"10.0.0.2","port":1,"protocol":"udp"}]}}` + "\n"
	if r := f.do(http.MethodGet, "/ping", allocTok, ""); string(r.body) != want {
		t.Fatalf("ping = %s, want %s", r.body, want)
	}
}
