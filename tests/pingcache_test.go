//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"github.com/gamefabric-alloc/allocsvc/tests/gfstub"
)

var pingRegions = map[string][]gfstub.PingTarget{
	"us-west":      {{Address: "127.0.0.10", Port: 7600, Protocol: "udp"}},
	"eu-central-1": {{Address: "127.0.0.20", Port: 7600}},
	"ap-south":     {{Address: "127.0.0.30", Port: 7600}},
}

type pingEnv struct {
	stub      *gfstub.Server
	cache     *store.PingCache
	refresher *pingcache.Refresher
	api       *httptest.Server
	now       time.Time
}

func newPingEnv(t *testing.T) *pingEnv {
	t.Helper()
	stub := gfstub.New("current-token")
	t.Cleanup(stub.Close)
	stub.SetPingRegions(pingRegions)
	e := &pingEnv{stub: stub, cache: store.NewPingCache(stack.ddb, newPingTable(t)), now: time.Now()}
	e.refresher = &pingcache.Refresher{
		Source: gamefabric.NewPingClient(&http.Client{Timeout: 5 * time.Second}, stub.BaseURL()+stub.PingPath),
		Tokens: secrets.NewTokenSource(stack.sm, newSecret(t, `{"tokens":["old-token","current-token"]}`), time.Minute, nil),
		Store:  e.cache,
		Zones:  map[string]string{"us-west": "US_WEST", "eu-central-1": "EU_CENTRAL"},
		Period: time.Minute,
		Now:    func() time.Time { return e.now },
	}
	e.api = httptest.NewServer(httpapi.NewHandler(httpapi.RegionsRoutes(e.cache, nil, time.Minute, func() time.Time { return e.now }), logging.New(io.Discard, 0)))
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
				PingTargets               []gfstub.PingTarget
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
	for _, failure := range []gfstub.Response{
		{Status: 500, Error: "ping service down"},
		{Status: 503},
		{RawBody: `{"servers":["127.0.0.1"]}`},
		{RawBody: `{"regions":`},
	} {
		e.stub.FailPing(failure)
		if _, err := e.refresher.Refresh(ctx); err == nil {
			t.Fatalf("refresh with %+v succeeded", failure)
		}
		if a := e.get(t, first.etag); a.status != http.StatusNotModified {
			t.Fatalf("cache changed after a failed refresh (%+v): %+v", failure, e.get(t, ""))
		}
	}

	// A region that disappeared upstream is removed.
	e.stub.SetPingRegions(map[string][]gfstub.PingTarget{"us-west": pingRegions["us-west"]})
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
	e.stub.SetPingRegions(map[string][]gfstub.PingTarget{})
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
	many := map[string][]gfstub.PingTarget{}
	for i := range 60 {
		many["region-"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))] = []gfstub.PingTarget{{Address: "127.0.0.1", Port: 7600 + i}}
	}
	e.stub.SetPingRegions(many)
	s, err := e.refresher.Refresh(context.Background())
	if err != nil || len(s.Stored) != len(many) || len(e.stored(t)) != len(many) {
		t.Fatalf("stored %d of %d regions: %v", len(e.stored(t)), len(many), err)
	}
	e.stub.SetPingRegions(map[string][]gfstub.PingTarget{"region-aa": many["region-aa"]})
	if s, err = e.refresher.Refresh(context.Background()); err != nil || s.Removed != len(many)-1 || len(e.stored(t)) != 1 {
		t.Fatalf("refresh = %+v, %v; stored %v", s, err, e.stored(t))
	}
}
