//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi/regionsapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store/pingtable"
)

var pingRegions = map[string][]gamefabric.PingTarget{
	"us-west":      {{Address: "127.0.0.10", Port: 7600, Protocol: "udp"}},
	"eu-central-1": {{Address: "127.0.0.20", Port: 7600}},
	"ap-south":     {{Address: "127.0.0.30", Port: 7600}},
}

type pingEnv struct {
	stub       *gfemu.Installation
	pingSecret string // the Ping Service's tokens, in GameFabric's rotation format
	cache      *pingtable.Table
	refresher  *pingcache.Refresher
	api        *httptest.Server
	now        time.Time
}

// newPingEnv is a refresher on DynamoDB Local and moto, reading a Ping
// Service as GameFabric runs it: on its own URL, with its own tokens
// (the allocator's do not work there).
func newPingEnv(t *testing.T) *pingEnv {
	t.Helper()
	stub := gfemu.Start("current-token")
	t.Cleanup(stub.Close)
	stub.Ping.SetTokens("current-ping-token")
	stub.Ping.SetRegions(pingRegions)
	e := &pingEnv{stub: stub, cache: pingtable.New(stack.ddb, newPingTable(t)), now: time.Now(),
		pingSecret: newSecret(t, `{"tokens":["old-ping-token","current-ping-token"]}`)}
	e.refresher = &pingcache.Refresher{
		Source: gamefabric.NewPingClient(&http.Client{Timeout: 5 * time.Second}, stub.PingURL),
		Tokens: secrets.NewTokenSource(stack.sm, e.pingSecret, time.Minute, nil),
		Store:  e.cache,
		Zones:  map[string]string{"us-west": "US_WEST", "eu-central-1": "EU_CENTRAL"},
		Period: time.Minute,
		Now:    func() time.Time { return e.now },
	}
	e.api = httptest.NewServer(validated(t, httpapi.NewHandler(regionsapi.Routes(e.cache, nil, time.Minute, func() time.Time { return e.now }), logging.New(io.Discard, 0))))
	t.Cleanup(e.api.Close)
	return e
}

type regionsAnswer struct {
	status  int
	etag    string
	regions []string // region/zone/address
}

func (e *pingEnv) get(t *testing.T, ifNoneMatch string) regionsAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.api.URL+"/v1/regions", nil)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := regionsAnswer{status: resp.StatusCode, etag: resp.Header.Get("ETag")}
	if resp.StatusCode == http.StatusOK {
		var doc struct {
			Regions []struct {
				Region, Zone, RefreshedAt string
				PingTargets               []gamefabric.PingTarget
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		a.regions = []string{}
		for _, r := range doc.Regions {
			a.regions = append(a.regions, r.Region+"/"+r.Zone+"/"+r.PingTargets[0].Address+"/"+r.PingTargets[0].Protocol)
		}
	}
	return a
}

func (e *pingEnv) stored(t *testing.T) []string {
	t.Helper()
	entries, err := e.cache.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range pingcache.Live(entries, time.Unix(0, 0)) {
		out = append(out, en.Region)
	}
	return out
}

func TestPingRefreshAndRegionsAPI(t *testing.T) {
	e := newPingEnv(t)
	ctx := context.Background()

	// Only regions in ZONES_BY_REGION are stored and served, sorted.
	if _, err := e.refresher.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"eu-central-1/EU_CENTRAL/127.0.0.20/udp", "us-west/US_WEST/127.0.0.10/udp"}
	first := e.get(t, "")
	if first.status != 200 || !reflect.DeepEqual(first.regions, want) || first.etag == "" {
		t.Fatalf("GET /v1/regions = %+v, want %v", first, want)
	}
	if got := e.stored(t); !reflect.DeepEqual(got, []string{"eu-central-1", "us-west"}) {
		t.Fatalf("stored %v, want the mapped regions only", got)
	}
	if again := e.get(t, first.etag); again.status != http.StatusNotModified || again.etag != first.etag {
		t.Fatalf("If-None-Match round trip = %+v", again)
	}

	// Failed refreshes keep the previous cache, byte for byte.
	for _, failure := range []gfemu.Answer{
		{Status: 500, Error: "ping service down"},
		{Status: 503},
		{RawBody: `{"servers":["127.0.0.1"]}`},
		{RawBody: `{"regions":`},
		// A shape we do not understand at all must not empty the cache.
		{RawBody: `{"regions":{"us-west":[{"host":"127.0.0.10","ports":{"ping":7600}}]}}`},
	} {
		e.stub.Ping.Script(failure)
		if _, err := e.refresher.Refresh(ctx); err == nil {
			t.Fatalf("refresh with %+v succeeded", failure)
		}
		if a := e.get(t, first.etag); a.status != http.StatusNotModified {
			t.Fatalf("cache changed after a failed refresh (%+v): %+v", failure, e.get(t, ""))
		}
	}

	// A region that disappeared upstream is removed.
	e.stub.Ping.SetRegions(map[string][]gamefabric.PingTarget{"us-west": pingRegions["us-west"]})
	s, err := e.refresher.Refresh(ctx)
	if err != nil || s.Removed != 1 {
		t.Fatalf("refresh = %+v, %v; want one region removed", s, err)
	}
	if a := e.get(t, first.etag); a.status != 200 || !reflect.DeepEqual(a.regions, want[1:]) {
		t.Fatalf("after eu-central-1 vanished: %+v", a)
	}

	// Expired items are not served, although DynamoDB still holds them.
	e.now = e.now.Add(3*time.Minute + time.Second)
	if a := e.get(t, ""); a.status != 200 || len(a.regions) != 0 || len(e.stored(t)) != 1 {
		t.Fatalf("expired entry served: %+v (stored %v)", a, e.stored(t))
	}

	// An empty but valid answer clears the cache.
	e.stub.Ping.SetRegions(map[string][]gamefabric.PingTarget{})
	if _, err := e.refresher.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.stored(t); len(got) != 0 {
		t.Fatalf("empty upstream left %v", got)
	}
}

func TestPingRefreshManyRegionsInBatches(t *testing.T) {
	e := newPingEnv(t)
	e.refresher.Zones = nil // every region is exposed
	many := map[string][]gamefabric.PingTarget{}
	for i := range 60 {
		many["region-"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))] = []gamefabric.PingTarget{{Address: "127.0.0.1", Port: 7600 + i}}
	}
	e.stub.Ping.SetRegions(many)
	s, err := e.refresher.Refresh(context.Background())
	if err != nil || len(s.Stored) != len(many) || len(e.stored(t)) != len(many) {
		t.Fatalf("stored %d of %d regions: %v", len(e.stored(t)), len(many), err)
	}
	e.stub.Ping.SetRegions(map[string][]gamefabric.PingTarget{"region-aa": many["region-aa"]})
	if s, err = e.refresher.Refresh(context.Background()); err != nil || s.Removed != len(many)-1 || len(e.stored(t)) != 1 {
		t.Fatalf("refresh = %+v, %v; stored %v", s, err, e.stored(t))
	}
}

// TestPingRefreshFromItsOwnService: the refresher reads the Ping Service
// on its own URL with the last of its own tokens; the allocator's secret
// (the old fallback) gets a 401 there and leaves the cache alone; a
// rotation of the Ping Service's tokens is followed through the secret.
func TestPingRefreshFromItsOwnService(t *testing.T) {
	e := newPingEnv(t)
	ctx := context.Background()
	if strings.HasPrefix(e.stub.PingURL, e.stub.URL) {
		t.Fatalf("the Ping Service %s is not separate from the allocator %s", e.stub.PingURL, e.stub.URL)
	}
	s, err := e.refresher.Refresh(ctx)
	if err != nil || !reflect.DeepEqual(s.Stored, []string{"eu-central-1", "us-west"}) || e.stub.Ping.Calls() != 1 {
		t.Fatalf("refresh = %+v, %v after %d ping calls", s, err, e.stub.Ping.Calls())
	}
	first := e.get(t, "")

	// The allocator's token, which the ping function used to fall back to.
	withAllocatorToken := *e.refresher
	withAllocatorToken.Tokens = secrets.NewTokenSource(stack.sm, newSecret(t, `{"tokens":["old-token","current-token"]}`), time.Minute, nil)
	var gf *gamefabric.Error
	if _, err := withAllocatorToken.Refresh(ctx); !errors.As(err, &gf) || gf.Status != http.StatusUnauthorized || !strings.Contains(err.Error(), "ping service answered 401") {
		t.Fatalf("refresh with the allocator's token: %v, want the Ping Service's 401", err)
	}
	if a := e.get(t, first.etag); a.status != http.StatusNotModified {
		t.Fatalf("a 401 changed the cache: %+v", e.get(t, ""))
	}

	// Rotation: the new token is appended, then the old one retired. The
	// cached token gets a 401, the secret is re-read and its last token used.
	putSecret(t, e.pingSecret, `{"tokens":["current-ping-token","next-ping-token"]}`)
	e.stub.Ping.SetTokens("next-ping-token")
	e.stub.Ping.SetRegions(map[string][]gamefabric.PingTarget{"us-west": pingRegions["us-west"]})
	if s, err := e.refresher.Refresh(ctx); err != nil || !reflect.DeepEqual(s.Stored, []string{"us-west"}) {
		t.Fatalf("refresh after the rotation = %+v, %v", s, err)
	}
}

// richAnswer is a Ping Service answer in a richer shape than ours: unknown
// fields at the top, beside the regions and in targets, a quic target, a
// target without a port, and a region whose only target has no port.
const richAnswer = `{
  "apiVersion": "v2", "generatedAt": "2026-11-22T12:00:00Z", "_links": {"self": "/ping"},
  "regions": {
    "US-West": [
      {"address": "127.0.0.10", "port": 7600, "protocol": "udp", "weight": 3, "labels": {"site": "lax1"}},
      {"address": "127.0.0.11", "port": 4433, "protocol": "QUIC"},
      {"address": "127.0.0.12", "protocol": "tcp"}
    ],
    "eu-central-1": [{"address": "127.0.0.20", "port": 7600, "extra": null}],
    "ap-south": [{"address": "127.0.0.30", "note": "draining"}],
    "_meta": {"count": 3}
  }
}`

// TestPingRefreshTolerantAnswer: such an answer refreshes the cache; the
// quic target is kept with its protocol, the portless one dropped, the
// region left without targets omitted (and removed from the cache), and
// the summary and the log count what was left out, without the token.
func TestPingRefreshTolerantAnswer(t *testing.T) {
	e := newPingEnv(t)
	e.refresher.Zones = map[string]string{"us-west": "US_WEST", "eu-central-1": "EU_CENTRAL", "ap-south": "AP_SOUTH"}
	var logs strings.Builder
	ctx := logging.WithLogger(context.Background(), logging.New(&logs, slog.LevelInfo))
	if s, err := e.refresher.Refresh(ctx); err != nil || len(s.Stored) != 3 {
		t.Fatalf("first refresh = %+v, %v", s, err)
	}

	e.stub.Ping.Script(gfemu.Answer{RawBody: richAnswer})
	s, err := e.refresher.Refresh(ctx)
	if err != nil {
		t.Fatalf("refresh of a richer answer: %v", err)
	}
	want := gamefabric.PingReport{TargetsDropped: 2, RegionsOmitted: 1, RegionsSkipped: 1}
	got := s.PingReport
	got.FirstProblem = ""
	if s.Upstream != 3 || !reflect.DeepEqual(s.Stored, []string{"eu-central-1", "us-west"}) || s.Removed != 1 || got != want ||
		s.FirstProblem != `region "us-west" target 2: port must be 1-65535` {
		t.Fatalf("summary = %+v, want 3 upstream regions, eu-central-1 and us-west stored, ap-south removed, report %+v", s, want)
	}

	wantTargets := map[string][]gamefabric.PingTarget{
		"eu-central-1": {{Address: "127.0.0.20", Port: 7600, Protocol: "udp"}},
		"us-west":      {{Address: "127.0.0.10", Port: 7600, Protocol: "udp"}, {Address: "127.0.0.11", Port: 4433, Protocol: "quic"}},
	}
	entries, err := e.cache.List(context.Background())
	cached := map[string][]gamefabric.PingTarget{}
	for _, en := range entries {
		cached[en.Region] = en.Targets
	}
	if err != nil || !reflect.DeepEqual(cached, wantTargets) {
		t.Fatalf("cache = %v, %v; want %v", cached, err, wantTargets)
	}
	if served := e.targets(t); !reflect.DeepEqual(served, wantTargets) {
		t.Fatalf("GET /v1/regions serves %v, want %v", served, wantTargets)
	}

	out := logs.String()
	if strings.Contains(out, "ping-token") || !strings.Contains(out, `"targetsDropped":2`) || !strings.Contains(out, `"regionsOmitted":1`) ||
		!strings.Contains(out, `"level":"WARN","msg":"the Ping Service's answer held targets or regions we left out"`) {
		t.Fatalf("logs:\n%s", out)
	}
}

// targets is what GET /v1/regions serves, by region.
func (e *pingEnv) targets(t *testing.T) map[string][]gamefabric.PingTarget {
	t.Helper()
	resp, err := http.Get(e.api.URL + "/v1/regions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Regions []struct {
			Region      string
			PingTargets []gamefabric.PingTarget
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/regions: %d, %v", resp.StatusCode, err)
	}
	out := map[string][]gamefabric.PingTarget{}
	for _, r := range doc.Regions {
		out[r.Region] = r.PingTargets
	}
	return out
}

// An Agones allocator's region is cached and served with or without ping
// targets (an empty list, which the contract requires), its own targets
// when the Ping Service has some, beside GameFabric's regions.
func TestPingRefreshListsAgonesRegions(t *testing.T) {
	e := newPingEnv(t)
	e.refresher.Unpinged = []string{"eu-baremetal", "us-west"}
	if _, err := e.refresher.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(e.api.URL + "/v1/regions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Regions []struct {
			Region      string
			PingTargets []gamefabric.PingTarget
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range doc.Regions {
		got[r.Region] = len(r.PingTargets)
		if r.PingTargets == nil {
			t.Fatalf("%s: pingTargets is not a list", r.Region)
		}
	}
	if want := map[string]int{"eu-baremetal": 0, "eu-central-1": 1, "us-west": 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("regions = %v, want %v", got, want)
	}
}
