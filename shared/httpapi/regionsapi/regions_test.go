package regionsapi

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

type fakeCache struct {
	entries []pingcache.Entry
	err     error
}

func (f fakeCache) List(context.Context) ([]pingcache.Entry, error) { return f.entries, f.err }

func TestRegions(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	target := []gamefabric.PingTarget{{Address: "127.0.0.1", Port: 7600, Protocol: "udp"}}
	cache := fakeCache{entries: []pingcache.Entry{
		{Region: "us-west", Zone: "US_WEST", Targets: target, RefreshedAt: now, ExpiresAt: now.Add(time.Minute)},
		{Region: "eu-central-1", Zone: "EU_CENTRAL", Targets: target, RefreshedAt: now, ExpiresAt: now.Add(time.Minute)},
		{Region: "ap-south", Zone: "AP", Targets: target, RefreshedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Second)},
	}}
	h := httpapi.NewHandler(Routes(cache, nil, time.Minute, func() time.Time { return now }), logging.New(io.Discard, 0))
	get := func(inm string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/v1/regions", nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	first := get("")
	var doc apishape.Regions
	if first.Code != 200 || json.Unmarshal(first.Body.Bytes(), &doc) != nil {
		t.Fatalf("GET = %d %s", first.Code, first.Body)
	}
	if len(doc.Regions) != 2 || doc.Regions[0].Region != "eu-central-1" || doc.Regions[1].Zone != "US_WEST" || doc.Regions[1].PingTargets[0].Port != 7600 {
		t.Fatalf("regions = %+v, want eu-central-1 then us-west, expired ap-south left out", doc.Regions)
	}
	etag := first.Header().Get("ETag")
	if etag == "" || first.Header().Get("Cache-Control") != "private, max-age=30" {
		t.Fatalf("headers = %v", first.Header())
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		if r := get(inm); r.Code != http.StatusNotModified || r.Body.Len() != 0 || r.Header().Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d %q", inm, r.Code, r.Body)
		}
	}
	if r := get(`"stale"`); r.Code != 200 {
		t.Errorf("stale ETag: %d", r.Code)
	}

	broken := httpapi.NewHandler(Routes(fakeCache{err: errors.New("scan failed")}, nil, time.Minute, time.Now), logging.New(io.Discard, 0))
	rec := httptest.NewRecorder()
	broken.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/regions", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" ||
		!strings.Contains(rec.Body.String(), `"SERVICE_UNAVAILABLE"`) || strings.Contains(rec.Body.String(), "scan failed") {
		t.Fatalf("store failure: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

func TestRegionsEmptyCacheIsAnEmptyList(t *testing.T) {
	h := httpapi.NewHandler(Routes(fakeCache{}, nil, time.Minute, time.Now), logging.New(io.Discard, 0))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/regions", nil))
	if rec.Code != 200 || rec.Body.String() != "{\"regions\":[]}\n" {
		t.Fatalf("empty cache: %d %q", rec.Code, rec.Body)
	}
}

type fakeHealth struct {
	list []regionhealth.Health
	err  error
}

func (f fakeHealth) List(context.Context) ([]regionhealth.Health, error) { return f.list, f.err }

func TestRegionsShowHealth(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cache := fakeCache{entries: []pingcache.Entry{
		{Region: "eu", Zone: "EU", RefreshedAt: now, ExpiresAt: now.Add(time.Minute)},
		{Region: "us", Zone: "US", RefreshedAt: now, ExpiresAt: now.Add(time.Minute)},
	}}
	tests := []struct {
		name   string
		health HealthLister
		want   string
	}{
		{"states and since", fakeHealth{list: []regionhealth.Health{{Region: "us", State: regionhealth.RegionUnhealthy, Since: now}}},
			`"region":"eu","zone":"EU","pingTargets":[],"refreshedAt":"2026-11-22T12:00:00Z","health":"Initialized"},{"region":"us","zone":"US","pingTargets":[],"refreshedAt":"2026-11-22T12:00:00Z","health":"Unhealthy","healthSince":"2026-11-22T12:00:00Z"`},
		{"health unavailable: targets still served", fakeHealth{err: errors.New("throttled")}, `"health":"Initialized"`},
		{"health disabled", nil, `"refreshedAt":"2026-11-22T12:00:00Z"}]`},
	}
	for _, tc := range tests {
		h := httpapi.NewHandler(Routes(cache, tc.health, time.Minute, func() time.Time { return now }), logging.New(io.Discard, 0))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/regions", nil))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body)
		}
	}
}

// TestRegionsPassProtocolsThrough: the Ping Service may offer protocols
// other than udp and tcp; clients get each target's protocol as cached.
func TestRegionsPassProtocolsThrough(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cache := fakeCache{entries: []pingcache.Entry{{Region: "us-west", RefreshedAt: now, ExpiresAt: now.Add(time.Minute),
		Targets: []gamefabric.PingTarget{{Address: "203.0.113.10", Port: 443, Protocol: "quic"}, {Address: "203.0.113.10", Port: 7600, Protocol: "udp"}}}}}
	h := httpapi.NewHandler(Routes(cache, nil, time.Minute, func() time.Time { return now }), logging.New(io.Discard, 0))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/regions", nil))
	want := `"pingTargets":[{"address":"203.0.113.10","port":443,"protocol":"quic"},{"address":"203.0.113.10","port":7600,"protocol":"udp"}]`
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("GET /v1/regions = %d %s, want %s", rec.Code, rec.Body, want)
	}
}
