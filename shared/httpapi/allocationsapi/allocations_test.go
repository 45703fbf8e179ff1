package allocationsapi

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

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

type fakeAllocations struct {
	res allocation.Result
	err error
	got allocation.Request
}

func (f *fakeAllocations) Allocate(_ context.Context, req allocation.Request) (allocation.Result, error) {
	f.got = req
	return f.res, f.err
}

func (f *fakeAllocations) Get(_ context.Context, id string) (gameinstance.Record, error) {
	return f.res.Record, f.err
}

func (f *fakeAllocations) EndByBackend(_ context.Context, id string) (gameinstance.Record, error) {
	return f.res.Record, f.err
}

func TestStatusOf(t *testing.T) {
	want := map[gameinstance.Code]int{
		gameinstance.CodeInvalidRequest: 400, gameinstance.CodeAllocationInProgress: 409, gameinstance.CodeIdempotencyMismatch: 409,
		gameinstance.CodeNoCapacity: 503, gameinstance.CodeRateLimited: 429, gameinstance.CodeUpstreamTimeout: 504, gameinstance.CodeAllocationFailed: 502,
		gameinstance.CodeNotFound: 404, gameinstance.CodeInternal: 500, gameinstance.CodeUnavailable: 503, "SOMETHING_NEW": 500,
	}
	for code, status := range want {
		if got := httpapi.StatusOf(code); got != status {
			t.Errorf("httpapi.StatusOf(%s) = %d, want %d", code, got, status)
		}
	}
}

func serve(t *testing.T, f *fakeAllocations, method, path, body string) (*http.Response, map[string]any) {
	t.Helper()
	h := httpapi.NewHandler(Routes(f, f), logging.New(io.Discard, 0))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("%s %s: body %q is not JSON: %v", method, path, rec.Body.String(), err)
	}
	return rec.Result(), doc
}

func errorCode(doc map[string]any) string {
	e, _ := doc["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestAllocateRoutes(t *testing.T) {
	rec := gameinstance.Record{GameInstanceID: "gi-1", State: gameinstance.StateAllocated, Region: "us-west",
		Server:               &gameinstance.Server{Address: "1.2.3.4:7777", IP: "1.2.3.4", Ports: map[string]int{"game": 7777}},
		PartnerGameTokenHash: "HASH", ClaimID: "CLAIM", CreatedAt: time.Unix(1, 0)}
	tests := []struct {
		name, method, path, body string
		fake                     *fakeAllocations
		wantStatus               int
		wantCode                 string
		wantHeader               [2]string
	}{
		{"created", "POST", "/v1/allocations", `{"gameInstanceId":"gi-1"}`, &fakeAllocations{res: allocation.Result{Record: rec, Created: true}}, 201, "", [2]string{"Location", "/v1/allocations/gi-1"}},
		{"replayed", "POST", "/v1/allocations", `{"gameInstanceId":"gi-1"}`, &fakeAllocations{res: allocation.Result{Record: rec}}, 200, "", [2]string{}},
		{"unknown field", "POST", "/v1/allocations", `{"gameInstanceId":"gi-1","x":1}`, &fakeAllocations{}, 400, "INVALID_REQUEST", [2]string{}},
		{"too large", "POST", "/v1/allocations", `{"serverArgs":"` + strings.Repeat("a", 70000) + `"}`, &fakeAllocations{}, 400, "INVALID_REQUEST", [2]string{}},
		{"in progress", "POST", "/v1/allocations", `{"gameInstanceId":"gi-1"}`, &fakeAllocations{err: &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, RetryAfter: 7 * time.Second}}, 409, "ALLOCATION_IN_PROGRESS", [2]string{"Retry-After", "7"}},
		{"internal hides cause", "POST", "/v1/allocations", `{"gameInstanceId":"gi-1"}`, &fakeAllocations{err: errors.New("dynamo exploded at arn:secret")}, 500, "INTERNAL", [2]string{}},
		{"get", "GET", "/v1/allocations/gi-1", ``, &fakeAllocations{res: allocation.Result{Record: rec}}, 200, "", [2]string{}},
		{"get missing", "GET", "/v1/allocations/nope", ``, &fakeAllocations{err: &gameinstance.Error{Code: gameinstance.CodeNotFound}}, 404, "NOT_FOUND", [2]string{}},
		{"unknown route", "GET", "/v2/things", ``, &fakeAllocations{}, 404, "NOT_FOUND", [2]string{}},
		{"wrong method", "DELETE", "/v1/allocations", ``, &fakeAllocations{}, 405, "METHOD_NOT_ALLOWED", [2]string{"Allow", "POST"}},
		{"end", "DELETE", "/v1/allocations/gi-1", ``, &fakeAllocations{res: allocation.Result{Record: rec}}, 200, "", [2]string{}},
		{"end in wrong state", "DELETE", "/v1/allocations/gi-1", ``, &fakeAllocations{err: &gameinstance.Error{Code: gameinstance.CodeInvalidState, State: gameinstance.StateFailed}}, 409, "INVALID_STATE", [2]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, doc := serve(t, tc.fake, tc.method, tc.path, tc.body)
			if resp.StatusCode != tc.wantStatus || errorCode(doc) != tc.wantCode {
				t.Fatalf("status %d code %q, want %d %q: %v", resp.StatusCode, errorCode(doc), tc.wantStatus, tc.wantCode, doc)
			}
			if h := tc.wantHeader; h[0] != "" && resp.Header.Get(h[0]) != h[1] {
				t.Fatalf("%s = %q, want %q", h[0], resp.Header.Get(h[0]), h[1])
			}
			raw, _ := json.Marshal(doc)
			for _, secret := range []string{"HASH", "CLAIM", "arn:secret", "exploded"} {
				if strings.Contains(string(raw), secret) {
					t.Fatalf("response leaks %q: %s", secret, raw)
				}
			}
			if tc.wantStatus < 300 && (doc["gameInstanceId"] != "gi-1" || doc["server"] == nil) {
				t.Fatalf("body = %v", doc)
			}
		})
	}
}
