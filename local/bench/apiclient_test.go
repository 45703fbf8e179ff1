package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// The bench measures single calls: one request each, whatever the answer,
// and its outcome named as the reports count it.
func TestPostAllocationOutcomes(t *testing.T) {
	tests := []struct {
		name, body  string
		status      int
		drop        bool
		wantOutcome string
		wantServer  string
		wantTrace   int
	}{
		{"created", `{"gameInstanceId":"gi","state":"Allocated","server":{"address":"1.2.3.4:7777","ip":"1.2.3.4","ports":{"game":7777}},"attempts":[{"region":"r","status":200,"durationMs":1}]}`,
			201, false, "201", "1.2.3.4:7777", 1},
		{"replayed", `{"gameInstanceId":"gi","state":"Allocated","server":{"address":"1.2.3.4:7777","ip":"1.2.3.4","ports":{}},"attempts":[]}`,
			200, false, "200", "1.2.3.4:7777", 0},
		{"in progress, not retried", `{"error":{"code":"ALLOCATION_IN_PROGRESS","message":"claimed"}}`, 409, false, "409 ALLOCATION_IN_PROGRESS", "", 0},
		{"no capacity with its trace", `{"error":{"code":"NO_CAPACITY","message":"none","attempts":[{"region":"a","status":503,"durationMs":1},{"region":"b","status":404,"durationMs":1}]}}`,
			503, false, "503 NO_CAPACITY", "", 2},
		{"the gateway's own 503", `{"message":"Service Unavailable"}`, 503, false, "503", "", 0},
		{"no answer", "", 0, true, "transport error", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				if tc.drop {
					conn, _, _ := w.(http.Hijacker).Hijack()
					conn.Close()
					return
				}
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			r := postAllocation(context.Background(), newAPIClient(srv.URL, 1), "gi", RegionOK)
			if r.Outcome() != tc.wantOutcome || r.server() != tc.wantServer || calls.Load() != 1 || r.Took <= 0 {
				t.Fatalf("outcome %q server %q after %d calls in %s, want %q %q after one", r.Outcome(), r.server(), calls.Load(), r.Took, tc.wantOutcome, tc.wantServer)
			}
			if n := len(r.attempts()); n != tc.wantTrace {
				t.Fatalf("%d attempts, want %d", n, tc.wantTrace)
			}
		})
	}
}

func (r apiResult) attempts() []allocclient.Attempt {
	if r.Body == nil {
		return nil
	}
	return r.Body.Attempts
}
