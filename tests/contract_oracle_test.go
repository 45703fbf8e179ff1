//go:build integration

package tests

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/template"
)

var (
	loadOnce sync.Once
	loaded   *Document
	loadErr  error
)

func document(t *testing.T) *Document {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = Load(stack.repoRoot) })
	if loadErr != nil {
		t.Fatalf("Load: %v", loadErr)
	}
	return loaded
}

func TestOperations(t *testing.T) {
	want := []Operation{
		{"POST", "/v1/allocations", "allocate"},
		{"DELETE", "/v1/allocations/{gameInstanceId}", "endAllocation"},
		{"GET", "/v1/allocations/{gameInstanceId}", "getAllocation"},
		{"POST", "/v1/game-instances/{gameInstanceId}/end", "endGame"},
		{"POST", "/v1/game-instances/{gameInstanceId}/heartbeat", "heartbeat"},
		{"POST", "/v1/game-instances/{gameInstanceId}/link", "linkGameServer"},
		{"GET", "/v1/regions", "listRegions"},
	}
	if got := document(t).Operations(); !reflect.DeepEqual(got, want) {
		t.Errorf("Operations() =\n%v\nwant\n%v", got, want)
	}
}

func TestLoadFailsWithoutDocument(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil {
		t.Fatal("Load of a directory without docs/openapi.yaml succeeded")
	}
}

// answer is a canned response.
type answer struct {
	status  int
	headers map[string]string
	body    string
}

func (a answer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	for k, v := range a.headers {
		w.Header().Set(k, v)
	}
	if a.body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

const (
	allocated = `{"gameInstanceId":"gi-1","state":"Allocated","region":"us-west","fallbackUsed":false,` +
		`"server":{"address":"203.0.113.10:7777","ip":"203.0.113.10","ports":{"game":7777}},` +
		`"attempts":[{"region":"us-west","reason":"requested","status":200,"durationMs":41}],` +
		`"createdAt":"2026-11-22T04:31:17.48Z","updatedAt":"2026-11-22T04:31:17.52Z"}`
	allocateBody = `{"gameInstanceId":"gi-1","desiredRegion":"us-west","gameServerVersion":"prag::set"}`
	regions      = `{"regions":[{"region":"us-west","zone":"US_WEST","pingTargets":[{"address":"127.0.0.10","port":7600,"protocol":"udp"}],"refreshedAt":"2026-11-22T04:37:00Z"}]}`
	etag         = `"5f1d0a3c9be24e7e8a1f0c4d2b6e9a17"`
	sigV4        = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/eu-central-1/execute-api/aws4_request, " +
		"SignedHeaders=content-type;host;x-amz-date, Signature=" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

var (
	created  = map[string]string{"Location": "/v1/allocations/gi-1", "Cache-Control": "no-store"}
	noStore  = map[string]string{"Cache-Control": "no-store"}
	cachable = map[string]string{"ETag": etag, "Cache-Control": "private, max-age=30"}
	bearer   = map[string]string{"WWW-Authenticate": `Bearer realm="game-instances"`}
)

func TestMiddleware(t *testing.T) {
	tests := []struct {
		name               string
		method, path, auth string
		body               string
		answer             answer
		wantViolation      string // "" = none; else a substring of the report
		wantOperation      string // counted on success
	}{
		{name: "allocation created", method: "POST", path: "/v1/allocations", body: allocateBody,
			answer: answer{201, created, allocated}, wantOperation: "allocate"},
		{name: "signed request", method: "POST", path: "/v1/allocations", auth: sigV4, body: allocateBody,
			answer: answer{201, created, allocated}, wantOperation: "allocate"},
		{name: "201 without Location", method: "POST", path: "/v1/allocations", body: allocateBody,
			answer: answer{201, noStore, allocated}, wantViolation: "Location"},
		{name: "undocumented field in the answer", method: "POST", path: "/v1/allocations", body: allocateBody,
			answer: answer{201, created, strings.Replace(allocated, `"state"`, `"token":"secret","state"`, 1)}, wantViolation: "token"},
		{name: "unknown state", method: "GET", path: "/v1/allocations/gi-1",
			answer: answer{200, noStore, strings.Replace(allocated, "Allocated", "Reserved", 1)}, wantViolation: "state"},
		{name: "not a date-time", method: "GET", path: "/v1/allocations/gi-1",
			answer: answer{200, noStore, strings.Replace(allocated, "2026-11-22T04:31:17.48Z", "yesterday", 1)}, wantViolation: "createdAt"},
		{name: "undocumented status", method: "GET", path: "/v1/allocations/gi-1",
			answer: answer{409, nil, `{"error":{"code":"INVALID_STATE","message":"no","state":"Ended"}}`}, wantViolation: "409"},
		{name: "code with another status", method: "POST", path: "/v1/allocations", body: allocateBody,
			answer: answer{409, nil, `{"error":{"code":"NO_CAPACITY","message":"none"}}`}, wantViolation: "code"},
		{name: "no capacity", method: "POST", path: "/v1/allocations", body: allocateBody,
			answer: answer{503, map[string]string{"Retry-After": "5"}, `{"error":{"code":"NO_CAPACITY","message":"none",` +
				`"attempts":[{"region":"us-west","status":404,"error":"none","body":"{}","durationMs":3}]}}`}, wantOperation: "allocate"},
		{name: "Retry-After not in seconds", method: "POST", path: "/v1/allocations", body: allocateBody,
			answer: answer{503, map[string]string{"Retry-After": "soon"}, `{"error":{"code":"NO_CAPACITY","message":"none"}}`}, wantViolation: "Retry-After"},
		{name: "gateway timeout answer", method: "POST", path: "/v1/allocations", body: allocateBody,
			answer: answer{503, nil, `{"message":"Service Unavailable"}`}, wantOperation: "allocate"},
		{name: "invalid request refused", method: "POST", path: "/v1/allocations", body: `{"desiredRegion":"us-west","color":"red"}`,
			answer: answer{400, noStore, `{"error":{"code":"INVALID_REQUEST","message":"gameInstanceId is required"}}`}, wantOperation: "allocate"},
		{name: "invalid request accepted", method: "POST", path: "/v1/allocations", body: `{"gameInstanceId":"gi-1","color":"red"}`,
			answer: answer{201, created, allocated}, wantViolation: "the request does not match"},
		{name: "malformed signature accepted", method: "POST", path: "/v1/allocations", auth: "AWS4-HMAC-SHA256 garbage", body: allocateBody,
			answer: answer{201, created, allocated}, wantViolation: "Credential"},
		{name: "heartbeat", method: "POST", path: "/v1/game-instances/gi-1/heartbeat", auth: "Bearer abc",
			answer: answer{200, noStore, `{"gameInstanceId":"gi-1","state":"Linked","heartbeatIntervalSeconds":30,"linkedAt":"2026-11-22T04:31:19.02Z"}`}, wantOperation: "heartbeat"},
		{name: "heartbeat without token refused", method: "POST", path: "/v1/game-instances/gi-1/heartbeat",
			answer: answer{401, bearer, `{"error":{"code":"UNAUTHORIZED","message":"send the token"}}`}, wantOperation: "heartbeat"},
		{name: "heartbeat without token accepted", method: "POST", path: "/v1/game-instances/gi-1/heartbeat",
			answer: answer{200, noStore, `{"gameInstanceId":"gi-1","state":"Linked"}`}, wantViolation: "Bearer"},
		{name: "401 without challenge", method: "POST", path: "/v1/game-instances/gi-1/link", auth: "Bearer wrong",
			answer: answer{401, nil, `{"error":{"code":"UNAUTHORIZED","message":"no"}}`}, wantViolation: "WWW-Authenticate"},
		{name: "invalid state without state", method: "POST", path: "/v1/game-instances/gi-1/link", auth: "Bearer abc",
			answer: answer{409, nil, `{"error":{"code":"INVALID_STATE","message":"it is Ended"}}`}, wantViolation: "state"},
		{name: "regions", method: "GET", path: "/v1/regions", answer: answer{200, cachable, regions}, wantOperation: "listRegions"},
		{name: "regions not modified", method: "GET", path: "/v1/regions", answer: answer{304, cachable, ""}, wantOperation: "listRegions"},
		{name: "regions without ETag", method: "GET", path: "/v1/regions",
			answer: answer{200, map[string]string{"Cache-Control": "private, max-age=30"}, regions}, wantViolation: "ETag"},
		{name: "unknown route, service", method: "GET", path: "/v1/nothing",
			answer: answer{404, nil, `{"error":{"code":"NOT_FOUND","message":"no route for GET /v1/nothing"}}`}},
		{name: "unknown route, gateway", method: "GET", path: "/v1/nothing", answer: answer{404, nil, `{"message":"Not Found"}`}},
		{name: "other method", method: "PUT", path: "/v1/allocations",
			answer: answer{405, nil, `{"error":{"code":"METHOD_NOT_ALLOWED","message":"PUT is not allowed on /v1/allocations"}}`}},
		{name: "unknown route answered", method: "GET", path: "/v1/nothing", answer: answer{200, nil, `{}`}, wantViolation: "404 or 405"},
		{name: "unknown route, wrong code", method: "GET", path: "/v1/nothing",
			answer: answer{404, nil, `{"error":{"code":"INTERNAL","message":"x"}}`}, wantViolation: "NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Load(stack.repoRoot)
			if err != nil {
				t.Fatal(err)
			}
			var reports []error
			srv := httptest.NewServer(d.Middleware(tc.answer, func(err error) { reports = append(reports, err) }))
			defer srv.Close()
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.answer.status {
				t.Errorf("the middleware changed the status to %d", resp.StatusCode)
			}
			checkReports(t, reports, tc.wantViolation)
			var v *Violation
			if len(reports) > 0 && (!errors.As(reports[0], &v) || v.Status != tc.answer.status || v.Method != tc.method) {
				t.Errorf("report %v is not a *Violation with method and status", reports[0])
			}
			counts := d.Counts()
			if tc.wantViolation == "" && counts[Exchange{tc.wantOperation, tc.answer.status}] != 1 {
				t.Errorf("Counts() = %v, want one %s %d", counts, tc.wantOperation, tc.answer.status)
			}
			if tc.wantViolation != "" && len(counts) != 0 {
				t.Errorf("a violation was counted: %v", counts)
			}
		})
	}
}

// The handler sees the request body the middleware read, and the client
// the whole response, unchanged.
func TestMiddlewarePassesThrough(t *testing.T) {
	d := document(t)
	var got string
	h := d.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = io.Copy(b, r.Body)
		got = b.String()
		answer{201, created, allocated}.ServeHTTP(w, r)
	}), func(err error) { t.Error(err) })
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/allocations", strings.NewReader(allocateBody))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if got != allocateBody {
		t.Errorf("handler read %q, want %q", got, allocateBody)
	}
	if rec.Code != 201 || rec.Body.String() != allocated || rec.Header().Get("Location") != "/v1/allocations/gi-1" {
		t.Errorf("client got %d %v %q", rec.Code, rec.Header(), rec.Body.String())
	}
}

// Exchanges validated at once, from many goroutines (run with -race).
func TestMiddlewareConcurrent(t *testing.T) {
	d, err := Load(stack.repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	h := d.Middleware(answer{201, created, allocated}, func(err error) { t.Error(err) })
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			req := httptest.NewRequest("POST", "/v1/allocations", strings.NewReader(allocateBody))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), req)
		})
	}
	wg.Wait()
	if n := d.Counts()[Exchange{"allocate", 201}]; n != 16 {
		t.Errorf("counted %d exchanges, want 16", n)
	}
}

// The document describes exactly the HTTP API template.yaml deploys with
// every route it can have (GameServerEndpoint HttpApi, where the game
// servers' routes are the API's too): every route is an operation and
// every operation a route.
func TestDocumentMatchesTemplateRoutes(t *testing.T) {
	tmpl, err := template.Load(filepath.Join(stack.repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := tmpl.HTTPRoutes(map[string]string{"GameServerEndpoint": "HttpApi"})
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for _, r := range all {
		routes[r.Method+" "+r.Path] = true
	}
	ops := map[string]bool{}
	for _, op := range document(t).Operations() {
		ops[op.Method+" "+op.Path] = true
	}
	for r := range routes {
		if !ops[r] {
			t.Errorf("template.yaml route %s is not in %s", r, DocumentPath)
		}
	}
	for op := range ops {
		if !routes[op] {
			t.Errorf("%s operation %s is not a route of template.yaml", DocumentPath, op)
		}
	}
	if len(routes) == 0 {
		t.Error("template.yaml has no HttpApi routes")
	}
}

// checkReports: no report for a right exchange, exactly one mentioning
// want for a wrong one.
func checkReports(t *testing.T, reports []error, want string) {
	t.Helper()
	switch {
	case want == "" && len(reports) > 0:
		t.Errorf("reported a right exchange: %v", reports)
	case want != "" && len(reports) != 1:
		t.Errorf("got %d reports, want 1 mentioning %q", len(reports), want)
	case want != "" && !strings.Contains(strings.ToLower(reports[0].Error()), strings.ToLower(want)):
		t.Errorf("report does not mention %q: %v", want, reports[0])
	}
}
