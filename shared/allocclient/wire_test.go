package allocclient

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// The wire types are apishape's, the structs the handlers encode; these
// tests still hold the client to the real handlers (routes, statuses,
// headers, the regions list, which is the client's own): every field the
// server writes must survive a decode and re-encode unchanged.

// fill sets every exported field reachable from v to a non-zero value, so
// a field the server adds shows up in its answer, and in the comparison.
func fill(v reflect.Value, name string) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 11, 22, 4, 31, 17, 480_000_123, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x-" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(len(name) + 1))
	case reflect.Float64:
		v.SetFloat(float64(len(name)) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), name)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, name+"-key")
		fill(e, name)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), v.Type().Field(i).Name)
			}
		}
	}
}

func filled[T any]() T {
	var x T
	fill(reflect.ValueOf(&x).Elem(), "root")
	return x
}

// tap keeps the last answer the real handler wrote.
type tap struct {
	h      http.Handler
	mu     sync.Mutex
	status int
	body   []byte
	header http.Header
}

func (t *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	t.mu.Lock()
	t.status, t.body, t.header = rec.Code, rec.Body.Bytes(), r.Header.Clone()
	t.mu.Unlock()
}

func (t *tap) last() (int, []byte, http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.body, t.header
}

// sameJSON fails unless a and b are the same JSON document.
func sameJSON(t *testing.T, what string, a, b []byte) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %s: %v", what, a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %s: %v", what, b, err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("%s differs:\nserver: %s\nclient: %s", what, a, b)
	}
}

type fakeAllocations struct {
	mu  sync.Mutex
	res allocation.Result
	err error
	got allocation.Request
}

func (f *fakeAllocations) Allocate(_ context.Context, req allocation.Request) (allocation.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = req
	return f.res, f.err
}

func (f *fakeAllocations) Get(context.Context, string) (gameinstance.Record, error) {
	return f.res.Record, f.err
}

func (f *fakeAllocations) EndByBackend(context.Context, string) (gameinstance.Record, error) {
	return f.res.Record, f.err
}

func realAPI(t *testing.T, f *fakeAllocations) (*Client, *tap) {
	t.Helper()
	tp := &tap{h: httpapi.NewHandler(allocationsapi.Routes(f, f), logging.New(io.Discard, 0))}
	srv := httptest.NewServer(tp)
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, tp
}

func TestAllocationRoundTripsTheRealHandler(t *testing.T) {
	rec := filled[gameinstance.Record]()
	rec.GameInstanceID = "gi-wire:1"
	f := &fakeAllocations{res: allocation.Result{Record: rec, Created: true}}
	c, tp := realAPI(t, f)
	ctx := context.Background()
	calls := []struct {
		name        string
		call        func() (*Allocation, error)
		wantCreated bool
	}{
		{"POST", func() (*Allocation, error) {
			return c.Allocate(ctx, AllocateRequest{GameInstanceID: rec.GameInstanceID})
		}, true},
		{"GET", func() (*Allocation, error) { return c.Get(ctx, rec.GameInstanceID) }, false},
		{"DELETE", func() (*Allocation, error) { return c.End(ctx, rec.GameInstanceID) }, false},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			_, body, _ := tp.last()
			mine, _ := json.Marshal(a)
			sameJSON(t, tc.name+" answer", body, mine)
			if a.Created != tc.wantCreated || a.GameInstanceID != "gi-wire:1" || a.Server == nil || len(a.Attempts) != 1 || a.LinkedAt.IsZero() {
				t.Fatalf("decoded %+v", a)
			}
		})
	}
	// sameJSON caught every key the server wrote and the client lost; here
	// every key the client reads must be one the server writes.
	_, body, _ := tp.last()
	var keys map[string]json.RawMessage
	var trace struct {
		Attempts []map[string]json.RawMessage `json:"attempts"`
	}
	if json.Unmarshal(body, &keys) != nil || json.Unmarshal(body, &trace) != nil || len(trace.Attempts) != 1 {
		t.Fatalf("the record: %s", body)
	}
	for _, key := range jsonNames(reflect.TypeFor[Allocation]()) {
		if _, ok := keys[key]; !ok {
			t.Errorf("the client reads %q; the server never wrote it for a record with every field set: %s", key, body)
		}
	}
	for _, key := range jsonNames(reflect.TypeFor[Attempt]()) {
		// A record's attempts leave out GameFabric's body; error answers carry it.
		if _, ok := trace.Attempts[0][key]; !ok && key != "body" {
			t.Errorf("the client reads attempts' %q; the server never wrote it: %s", key, body)
		}
	}
}

func TestQueuedPlacementThroughTheRealHandler(t *testing.T) {
	for _, created := range []bool{true, false} { // the first answer, and a replay's
		rec := filled[gameinstance.Record]()
		rec.GameInstanceID, rec.State, rec.Failure = "gi-queued", gameinstance.State(StateQueued), nil
		f := &fakeAllocations{res: allocation.Result{Record: rec, Created: created}}
		c, tp := realAPI(t, f)
		ctx := context.Background()
		a, err := c.Allocate(ctx, AllocateRequest{GameInstanceID: rec.GameInstanceID})
		if err != nil {
			t.Fatal(err)
		}
		status, body, _ := tp.last()
		mine, _ := json.Marshal(a)
		sameJSON(t, "202 answer", body, mine)
		if status != http.StatusAccepted || a.State != StateQueued || a.Created || a.QueuedUntil.IsZero() || a.RetryAfter < time.Second {
			t.Fatalf("created %v: %d, decoded %+v (Retry-After %s)", created, status, a, a.RetryAfter)
		}
		if a, err = c.Get(ctx, rec.GameInstanceID); err != nil || a.State != StateQueued || a.RetryAfter < time.Second {
			t.Fatalf("GET of a queued placement: %+v, %v", a, err)
		}
	}
}

func TestAllocateRequestReachesTheServerWhole(t *testing.T) {
	// Same JSON names as allocation.Request, no more, no fewer.
	ours, theirs := jsonNames(reflect.TypeFor[AllocateRequest]()), jsonNames(reflect.TypeFor[allocation.Request]())
	if !slices.Equal(ours, theirs) {
		t.Fatalf("AllocateRequest fields %v, allocation.Request fields %v", ours, theirs)
	}
	req := filled[AllocateRequest]()
	f := &fakeAllocations{res: allocation.Result{Record: gameinstance.Record{GameInstanceID: req.GameInstanceID, State: gameinstance.StateAllocated}}}
	c, _ := realAPI(t, f)
	if _, err := c.Allocate(context.Background(), req); err != nil {
		t.Fatal(err) // the server decodes strictly: an unknown field would be INVALID_REQUEST
	}
	f.mu.Lock()
	got, _ := json.Marshal(f.got)
	f.mu.Unlock()
	var back AllocateRequest
	if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, req) {
		t.Fatalf("the server decoded %s; sent %+v", got, req)
	}
}

func jsonNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func TestErrorRoundTripsTheRealHandler(t *testing.T) {
	attempts := []gameinstance.Attempt{filled[gameinstance.Attempt](), {Region: "eu", Status: 404, DurationMs: 3}}
	tests := []struct {
		name          string
		err           error
		wantStatus    int
		wantRetry     time.Duration
		wantTrace     bool
		wantState     string
		wantRetryable bool
	}{
		{"no capacity with its trace", &gameinstance.Error{Code: gameinstance.CodeNoCapacity, Message: "no server", Attempts: attempts, RetryAfter: 5 * time.Second},
			503, 5 * time.Second, true, "", true},
		{"invalid state", &gameinstance.Error{Code: gameinstance.CodeInvalidState, Message: "it failed", State: gameinstance.StateFailed},
			409, 0, false, "Failed", false},
		{"in progress", &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, Message: "claimed", RetryAfter: 3 * time.Second},
			409, 3 * time.Second, false, "", true},
		{"internal hides its cause", &gameinstance.Error{Code: gameinstance.CodeInternal, Message: "secret detail", Err: errors.New("boom")},
			500, 0, false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, tp := realAPI(t, &fakeAllocations{err: tc.err})
			_, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-err"})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			code := string(gameinstance.CodeOf(tc.err))
			if e.Status != tc.wantStatus || e.Code != code || e.RetryAfter != tc.wantRetry || e.Retryable() != tc.wantRetryable || !IsCode(err, code) {
				t.Fatalf("got %+v (retryable %v)", e, e.Retryable())
			}
			_, body, _ := tp.last()
			var server struct {
				Error struct {
					Message  string          `json:"message"`
					Attempts json.RawMessage `json:"attempts"`
				} `json:"error"`
			}
			_ = json.Unmarshal(body, &server)
			if e.Message != server.Error.Message || strings.Contains(err.Error(), "boom") {
				t.Fatalf("message %q, server said %q; Error() = %q", e.Message, server.Error.Message, err)
			}
			switch {
			case !tc.wantTrace && tc.wantState == "":
				if e.Allocation != nil {
					t.Fatalf("an allocation from %s", body)
				}
			default:
				if e.Allocation == nil || e.Allocation.GameInstanceID != "gi-err" || string(e.Allocation.State) != tc.wantState ||
					e.Allocation.Error == nil || string(e.Allocation.Error.Code) != code {
					t.Fatalf("allocation %+v from %s", e.Allocation, body)
				}
				if tc.wantTrace {
					mine, _ := json.Marshal(e.Allocation.Attempts)
					sameJSON(t, "attempts (with their bodies)", server.Error.Attempts, mine)
				}
			}
		})
	}
}

type fakeCache []pingcache.Entry

func (f fakeCache) List(context.Context) ([]pingcache.Entry, error) { return f, nil }

type fakeHealth []regionhealth.Health

func (f fakeHealth) List(context.Context) ([]regionhealth.Health, error) { return f, nil }

func TestRegionsRoundTripTheRealHandler(t *testing.T) {
	now := time.Now()
	entry := filled[pingcache.Entry]()
	entry.Region, entry.ExpiresAt = "eu-central-1", now.Add(time.Minute)
	bare := pingcache.Entry{Region: "us-west", Zone: "US", RefreshedAt: now, ExpiresAt: now.Add(time.Minute),
		Targets: []gamefabric.PingTarget{{Address: "203.0.113.7", Port: 7600, Protocol: "udp"}}}
	health := fakeHealth{{Region: "eu-central-1", State: regionhealth.RegionDeployed, Since: now.Add(-time.Hour)}}
	tp := &tap{h: httpapi.NewHandler(regionsapi.Routes(fakeCache{entry, bare}, health, time.Minute, time.Now), logging.New(io.Discard, 0))}
	srv := httptest.NewServer(tp)
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}

	first, err := c.Regions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	status, body, _ := tp.last()
	mine, _ := json.Marshal(first)
	sameJSON(t, "regions", body, mine)
	if status != 200 || len(first.Regions) != 2 || first.Regions[0].Health != "Deployed" || first.Regions[1].Health != "Initialized" {
		t.Fatalf("%d %s", status, body)
	}

	// The second call revalidates: 304, and the same list from the cache,
	// which the caller's changes to the first answer did not touch.
	first.Regions[0].PingTargets[0].Address = "changed by the caller"
	second, err := c.Regions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	status, _, sent := tp.last()
	again, _ := json.Marshal(second)
	if status != http.StatusNotModified || sent.Get("If-None-Match") == "" {
		t.Fatalf("second call: %d, If-None-Match %q", status, sent.Get("If-None-Match"))
	}
	sameJSON(t, "cached regions", body, again)
}

// TestEveryServerCodeHasAConstant reads the server's code constants from
// source, so a code added there fails here until the client names it.
func TestEveryServerCodeHasAConstant(t *testing.T) {
	ours := map[string]bool{}
	for _, c := range []string{CodeInvalidRequest, CodeAllocationInProgress, CodeIdempotencyMismatch, CodeNoCapacity, CodeRateLimited,
		CodeUpstreamTimeout, CodeAllocationFailed, CodeUpstreamInvalid, CodeNotFound, CodeUnauthorized, CodeInvalidState, CodeInternal,
		CodeServiceUnavailable, CodeMethodNotAllowed, CodePlacementCancelled, CodePlacementTimedOut, CodeInvalidMatch, CodeMatchTooLarge} {
		ours[c] = true
	}
	var server []string
	for _, file := range []string{"../gameinstance/errors.go", "../httpapi/errors.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || spec.Type == nil || !strings.HasSuffix(types(spec.Type), "Code") {
				return true
			}
			for _, v := range spec.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					server = append(server, s)
				}
			}
			return true
		})
	}
	if len(server) < 13 {
		t.Fatalf("read only %v from the server's sources", server)
	}
	for _, code := range server {
		if !ours[code] {
			t.Errorf("the server answers %s; allocclient has no constant for it", code)
		}
	}
}

func types(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return types(x.X) + "." + x.Sel.Name
	}
	return ""
}
