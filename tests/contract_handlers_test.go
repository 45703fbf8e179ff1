//go:build integration

package tests

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi/allocationsapi"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi/regionsapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// domain answers every route of the service with one canned record or error.
type domain struct {
	rec     gameinstance.Record
	created bool
	err     error
}

func (d domain) Allocate(context.Context, allocation.Request) (allocation.Result, error) {
	return allocation.Result{Record: d.rec, Created: d.created}, d.err
}
func (d domain) Get(context.Context, string) (gameinstance.Record, error) { return d.rec, d.err }
func (d domain) EndByBackend(context.Context, string) (gameinstance.Record, error) {
	return d.rec, d.err
}
func (d domain) Link(context.Context, string, string, *gameinstance.LinkInfo, *gameinstance.RoomOffer) (gameinstance.Record, error) {
	return d.rec, d.err
}
func (d domain) Heartbeat(context.Context, string, string) (gameinstance.Record, error) {
	return d.rec, d.err
}
func (d domain) HeartbeatSessions(context.Context, string, string) (gameinstance.Record, []gameinstance.Record, error) {
	return d.rec, []gameinstance.Record{endedRec}, d.err
}
func (d domain) End(context.Context, string, string, string) (gameinstance.Record, error) {
	return d.rec, d.err
}

type pings []pingcache.Entry

func (p pings) List(context.Context) ([]pingcache.Entry, error) { return p, nil }

type healths []regionhealth.Health

func (h healths) List(context.Context) ([]regionhealth.Health, error) { return h, nil }

var t0 = time.Date(2026, 11, 22, 4, 31, 17, 480_000_000, time.UTC)

// Records in every shape the domain produces.
var (
	allocatedRec = gameinstance.Record{GameInstanceID: "gi-1", State: gameinstance.StateAllocated, Region: "us-west",
		Server:    &gameinstance.Server{Address: "203.0.113.10:7777", IP: "203.0.113.10", Ports: map[string]int{"game": 7777}},
		Attempts:  []gameinstance.Attempt{{Region: "us-west", Reason: "requested", Status: 200, DurationMs: 41}},
		CreatedAt: t0, UpdatedAt: t0, PartnerGameTokenHash: "HASH", ClaimID: "CLAIM"}
	everythingRec = gameinstance.Record{GameInstanceID: "gi-2", State: gameinstance.StateUnhealthy, Region: "us-west",
		FallbackUsed: true, LatencyRelaxed: true,
		Server: &gameinstance.Server{Address: "203.0.113.10:7777", IP: "203.0.113.10", Ports: map[string]int{"game": 7777, "query": 7778}},
		Attempts: []gameinstance.Attempt{
			{Region: "eu-central-1", Reason: "latency #1 (2 players, avg 40 ms, max 50 ms)", Status: 429, Error: "slow down",
				DurationMs: 3, RateLimited: true, AllocatorRegion: "dev-eu-central-1"},
			{Region: "ap-south", Reason: "latency #2 (1 players, avg 90 ms, max 90 ms)", Status: 0, Error: "timeout", DurationMs: 10000, SuspectedOrphan: true},
			{Region: "us-west", Reason: "fallback", Status: 200, DurationMs: 30}},
		CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), LinkedAt: t0.Add(time.Second),
		LinkInfo:        &gameinstance.LinkInfo{Address: "203.0.113.10:7777", Ports: map[string]int{"game": 7777}, ServerName: "us-west-1"},
		LastHeartbeatAt: t0.Add(time.Minute), UnhealthyAt: t0.Add(time.Hour), UnhealthyReason: gameinstance.ReasonMissedHeartbeats}
	recoveredRec = gameinstance.Record{GameInstanceID: "gi-3", State: gameinstance.StateLinked, RecoveredByLink: true,
		Server:   &gameinstance.Server{Address: "203.0.113.10:7777", IP: "203.0.113.10"}, // no ports reported
		Attempts: []gameinstance.Attempt{}, CreatedAt: t0, UpdatedAt: t0, LinkedAt: t0,
		LinkInfo: &gameinstance.LinkInfo{Address: "203.0.113.10:7777"}}
	failedRec = gameinstance.Record{GameInstanceID: "gi-4", State: gameinstance.StateFailed,
		Attempts: []gameinstance.Attempt{{Region: "us-west", Reason: "requested", Status: 404, Error: "none", Body: `{"error":"none"}`, DurationMs: 5}},
		Failure:  &gameinstance.Failure{Code: gameinstance.CodeNoCapacity, Message: "no game server is ready"}, CreatedAt: t0, UpdatedAt: t0}
	endedRec = gameinstance.Record{GameInstanceID: "gi-5", State: gameinstance.StateEnded, Region: "us-west",
		Server: allocatedRec.Server, Attempts: allocatedRec.Attempts, CreatedAt: t0, UpdatedAt: t0,
		LinkedAt: t0, EndedAt: t0.Add(time.Hour), EndReason: "EndedByBackend"}
)

func domainErr(code gameinstance.Code, mod func(*gameinstance.Error)) error {
	e := &gameinstance.Error{Code: code, Message: "because"}
	if mod != nil {
		mod(e)
	}
	return e
}

var (
	retry   = func(e *gameinstance.Error) { e.RetryAfter = 2 * time.Second }
	inState = func(s gameinstance.State) func(*gameinstance.Error) {
		return func(e *gameinstance.Error) { e.State = s }
	}
	attempts = func(e *gameinstance.Error) {
		e.RetryAfter = 5 * time.Second
		e.Attempts = []gameinstance.Attempt{{Region: "us-west", Reason: "requested", Status: 503, Error: "none", Body: "{}", DurationMs: 4}}
	}
)

// TestServiceHandlers drives the real shared/httpapi handlers with canned
// domain answers of every shape and checks each exchange against the
// document: the service's JSON and the document describe the same API.
func TestServiceHandlers(t *testing.T) {
	const (
		link = "/v1/game-instances/gi-1/link"
		hb   = "/v1/game-instances/gi-1/heartbeat"
		end  = "/v1/game-instances/gi-1/end"
	)
	tests := []struct {
		name, method, path, auth, body string
		dom                            domain
		wantStatus                     int
	}{
		{"allocate", "POST", "/v1/allocations", "", allocateBody, domain{rec: allocatedRec, created: true}, 201},
		{"replay", "POST", "/v1/allocations", "", allocateBody, domain{rec: everythingRec}, 200},
		{"allocate, bad JSON", "POST", "/v1/allocations", "", `{"gameInstanceId":`, domain{}, 400},
		{"allocate, unknown field", "POST", "/v1/allocations", "", `{"gameInstanceId":"gi-1","colour":"red"}`, domain{}, 400},
		{"in progress", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeAllocationInProgress, retry)}, 409},
		{"mismatch", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeIdempotencyMismatch, nil)}, 409},
		{"no capacity", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeNoCapacity, attempts)}, 503},
		{"rate limited", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeRateLimited, attempts)}, 429},
		{"upstream timeout", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeUpstreamTimeout, attempts)}, 504},
		{"allocation failed", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeAllocationFailed, func(e *gameinstance.Error) {
			e.Attempts = []gameinstance.Attempt{{Region: "us-west", Status: 401, Error: "bad token", DurationMs: 2}}
		})}, 502},
		{"unavailable", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeUnavailable, retry)}, 503},
		{"internal", "POST", "/v1/allocations", "", allocateBody, domain{err: domainErr(gameinstance.CodeInternal, nil)}, 500},
		{"get", "GET", "/v1/allocations/gi-1", "", "", domain{rec: everythingRec}, 200},
		{"get recovered", "GET", "/v1/allocations/gi-3", "", "", domain{rec: recoveredRec}, 200},
		{"get failed", "GET", "/v1/allocations/gi-4", "", "", domain{rec: failedRec}, 200},
		{"get unknown", "GET", "/v1/allocations/gi-9", "", "", domain{err: domainErr(gameinstance.CodeNotFound, nil)}, 404},
		{"get bad id", "GET", "/v1/allocations/bad%20id", "", "", domain{err: domainErr(gameinstance.CodeInvalidRequest, nil)}, 400},
		{"get unavailable", "GET", "/v1/allocations/gi-1", "", "", domain{err: domainErr(gameinstance.CodeUnavailable, retry)}, 503},
		{"delete", "DELETE", "/v1/allocations/gi-5", "", "", domain{rec: endedRec}, 200},
		{"delete failed one", "DELETE", "/v1/allocations/gi-4", "", "", domain{err: domainErr(gameinstance.CodeInvalidState, inState(gameinstance.StateFailed))}, 409},
		{"delete allocating", "DELETE", "/v1/allocations/gi-4", "", "", domain{err: domainErr(gameinstance.CodeAllocationInProgress, func(e *gameinstance.Error) {
			retry(e)
			e.State = gameinstance.StateAllocating
		})}, 409},
		{"link", "POST", link, "Bearer tok", `{"address":"203.0.113.10:7777","ports":{"game":7777},"serverName":"s1"}`, domain{rec: everythingRec}, 200},
		{"link, empty body", "POST", link, "Bearer tok", "", domain{rec: recoveredRec}, 200},
		{"link, bad address", "POST", link, "Bearer tok", `{"address":"nowhere"}`, domain{rec: allocatedRec}, 400},
		{"link, no token", "POST", link, "", "", domain{rec: allocatedRec}, 401},
		{"link, wrong token", "POST", link, "Bearer wrong", "", domain{err: domainErr(gameinstance.CodeUnauthorized, nil)}, 401},
		{"link, ended", "POST", link, "Bearer tok", "", domain{err: domainErr(gameinstance.CodeInvalidState, inState(gameinstance.StateEnded))}, 409},
		{"heartbeat", "POST", hb, "Bearer tok", "", domain{rec: everythingRec}, 200},
		{"heartbeat for all sessions", "POST", hb, "Bearer tok", `{"allSessions":true}`, domain{rec: everythingRec}, 200},
		{"heartbeat, unavailable", "POST", hb, "Bearer tok", "", domain{err: domainErr(gameinstance.CodeUnavailable, retry)}, 503},
		{"end", "POST", end, "Bearer tok", `{"reason":"IWON"}`, domain{rec: endedRec}, 200},
		{"end, unknown field", "POST", end, "Bearer tok", `{"why":"IWON"}`, domain{rec: endedRec}, 400},
		{"regions", "GET", "/v1/regions", "", "", domain{}, 200},
		{"unknown path", "GET", "/v1/nothing", "", "", domain{}, 404},
		{"other method", "PUT", "/v1/allocations", "", "", domain{}, 405},
	}
	now := time.Now()
	entries := pings{
		{Region: "eu-central-1", Zone: "EU_CENTRAL", Targets: []gamefabric.PingTarget{{Address: "198.51.100.7", Port: 7600, Protocol: "udp"}},
			RefreshedAt: now, ExpiresAt: now.Add(time.Hour)},
		{Region: "us-west", Targets: []gamefabric.PingTarget{{Address: "203.0.113.10", Port: 7600, Protocol: "tcp"}},
			RefreshedAt: now, ExpiresAt: now.Add(time.Hour)},
	}
	health := healths{{Region: "eu-central-1", State: regionhealth.RegionUnhealthy, Since: now}}
	d := document(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			routes := allocationsapi.Routes(tc.dom, tc.dom)
			maps.Copy(routes, httpapi.LinkBackRoutes(tc.dom, 30*time.Second))
			maps.Copy(routes, regionsapi.Routes(entries, health, time.Minute, time.Now))
			h := d.Middleware(httpapi.NewHandler(routes, logging.New(io.Discard, 0)), func(err error) { t.Error(err) })
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Errorf("status %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
		})
	}
	// A matching If-None-Match gets 304, and that answer matches too.
	h := d.Middleware(httpapi.NewHandler(regionsapi.Routes(entries, nil, time.Minute, time.Now), logging.New(io.Discard, 0)),
		func(err error) { t.Error(err) })
	first := httptest.NewRecorder()
	h.ServeHTTP(first, httptest.NewRequest("GET", "/v1/regions", nil))
	req := httptest.NewRequest("GET", "/v1/regions", nil)
	req.Header.Set("If-None-Match", first.Header().Get("ETag"))
	second := httptest.NewRecorder()
	h.ServeHTTP(second, req)
	if first.Code != http.StatusOK || second.Code != http.StatusNotModified {
		t.Errorf("regions answered %d then %d, want 200 then 304", first.Code, second.Code)
	}
}
