package gfemu

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

const pingTok = "ping-new"

// pingFixture is a Ping Service over two Allocators on one clock: "us"
// (region strings mapped as in the local stack) and "eu" (strings
// reported as they are).
type pingFixture struct {
	us, eu *fixture
	srv    *httptest.Server
}

func newPingFixture(t *testing.T) *pingFixture {
	t.Helper()
	us := newFixture(t, nil)
	eu := newFixture(t, func(c *Config) { c.Now = us.clock.Now })
	eu.clock = us.clock
	svc := NewPingService(PingConfig{Tokens: []string{"ping-old", pingTok}, Sources: []PingSource{
		{Allocator: us.emu, Regions: map[string]string{"dev-us-west": "us-west", "dev-us-east": "us-east"}},
		{Allocator: eu.emu},
	}})
	p := &pingFixture{us: us, eu: eu, srv: httptest.NewServer(svc.Handler())}
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pingFixture) get(t *testing.T, path, auth string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.srv.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := p.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

func TestPing(t *testing.T) {
	tests := []struct {
		name   string
		us, eu []string
		// allocate takes one server from us in "r" first.
		allocate bool
		advance  time.Duration
		want     string
	}{
		{name: "no servers", want: `{"regions":{}}`},
		{name: "ping port, else game port, else address port; deduplicated; sorted",
			us: []string{
				`{"address":"10.0.0.2:7001","priority":0,"region":"dev-us-west","ports":{"game":7001,"ping":7600}}`,
				`{"address":"10.0.0.2:7002","priority":0,"region":"dev-us-west","ports":{"game":7002,"ping":7600}}`,
				`{"address":"10.0.0.1:7003","priority":0,"region":"dev-us-west","ports":{"game":7777}}`,
				`{"address":"10.0.0.8:7005","priority":0}`,
			},
			eu: []string{`{"address":"10.0.0.9:7004","priority":0,"region":"eu-central-1"}`},
			want: `{"regions":{"eu-central-1":[{"address":"10.0.0.9","port":7004,"protocol":"udp"}],` +
				`"us-west":[{"address":"10.0.0.1","port":7777,"protocol":"udp"},{"address":"10.0.0.2","port":7600,"protocol":"udp"}]}}`},
		{name: "each Allocator's strings map back to Region names; unlisted strings stay as they are",
			us: []string{
				`{"address":"10.0.0.1:1","priority":0,"region":"dev-us-east"}`,
				`{"address":"10.0.0.2:1","priority":0,"region":"ap-south"}`,
			},
			// "dev-us-east" means nothing to eu: not mapped there.
			eu:   []string{`{"address":"10.0.0.3:1","priority":0,"region":"dev-us-east"}`},
			want: `{"regions":{"ap-south":[{"address":"10.0.0.2","port":1,"protocol":"udp"}],"dev-us-east":[{"address":"10.0.0.3","port":1,"protocol":"udp"}],"us-east":[{"address":"10.0.0.1","port":1,"protocol":"udp"}]}}`},
		{name: "a Region served through two Allocators lists both",
			us:   []string{`{"address":"10.0.0.1:1","priority":0,"region":"dev-us-west"}`},
			eu:   []string{`{"address":"10.0.0.2:1","priority":0,"region":"us-west"}`},
			want: `{"regions":{"us-west":[{"address":"10.0.0.1","port":1,"protocol":"udp"},{"address":"10.0.0.2","port":1,"protocol":"udp"}]}}`},
		{name: "expired servers are not listed",
			us: []string{
				`{"address":"10.0.0.1:1","priority":0,"region":"a","timeout":5}`,
				`{"address":"10.0.0.2:1","priority":0,"region":"b","timeout":50}`,
			},
			advance: 10 * time.Second,
			want:    `{"regions":{"b":[{"address":"10.0.0.2","port":1,"protocol":"udp"}]}}`},
		{name: "allocated servers are not listed",
			us: []string{
				`{"address":"10.0.0.1:1","priority":0,"region":"r"}`,
				`{"address":"10.0.0.2:1","priority":1,"region":"r"}`,
			},
			allocate: true,
			want:     `{"regions":{"r":[{"address":"10.0.0.2","port":1,"protocol":"udp"}]}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPingFixture(t)
			for _, b := range tc.us {
				p.us.mustRegister(b)
			}
			for _, b := range tc.eu {
				p.eu.mustRegister(b)
			}
			if tc.allocate {
				if r := p.us.allocate(`{"region":"r"}`); r.status != http.StatusOK {
					t.Fatalf("allocate = %d %s", r.status, r.body)
				}
			}
			p.us.clock.Advance(tc.advance)
			r := p.get(t, DefaultPingPath, "Bearer "+pingTok)
			if r.status != http.StatusOK || string(r.body) != tc.want+"\n" {
				t.Fatalf("ping = %d %s, want %s", r.status, r.body, tc.want)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
		})
	}
}

// The Ping Service has its own tokens: an Allocator's or a Registry's are
// refused, as are its own ones sent bare.
func TestPingTokensAndRoutes(t *testing.T) {
	p := newPingFixture(t)
	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"current token", DefaultPingPath, "Bearer " + pingTok, 200},
		{"previous token", DefaultPingPath, "Bearer ping-old", 200},
		{"no token", DefaultPingPath, "", 401},
		{"bare token", DefaultPingPath, pingTok, 401},
		{"allocator token", DefaultPingPath, "Bearer " + allocTok, 401},
		{"registry token", DefaultPingPath, "Bearer " + regTok, 401},
		{"another path", "/ping/x", "Bearer " + pingTok, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := p.get(t, tc.path, tc.auth)
			if r.status != tc.want {
				t.Fatalf("status = %d %s, want %d", r.status, r.body, tc.want)
			}
			if tc.want != 200 && r.errorText(t) == "" {
				t.Fatal("error without text")
			}
		})
	}
}

func TestPingWithoutTokensRefusesEverything(t *testing.T) {
	srv := httptest.NewServer(NewPingService(PingConfig{Path: "/discovery", Tokens: []string{""}}).Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/discovery", nil)
	req.Header.Set("Authorization", "Bearer ")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", resp.StatusCode)
	}
}
