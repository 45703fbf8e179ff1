//go:build integration

package tests

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
)

func reasons(r response) []string {
	var out []string
	for _, a := range r.attempts() {
		reason, _ := a["reason"].(string)
		if i := strings.Index(reason, " ("); i > 0 {
			reason = reason[:i]
		}
		out = append(out, a["region"].(string)+":"+itoa(a["status"])+":"+reason)
	}
	return out
}

func TestRegionSelection(t *testing.T) {
	tests := []struct {
		name         string
		body         string
		full         []string // regions answering 503
		wantStatus   int
		wantAttempts []string
		wantRelaxed  bool
	}{
		{name: "desiredRegion behaves as before",
			body: `{"gameInstanceId":"gi-sel","desiredRegion":"us-west"}`, full: []string{"us-west"},
			wantStatus: 201, wantAttempts: []string{"us-west:503:requested", "eu-central-1:200:fallback"}},
		{name: "ordered preferences, first with capacity wins",
			body: `{"gameInstanceId":"gi-sel","preferredRegions":["ap-south","US-East-1"]}`, full: []string{"ap-south"},
			wantStatus: 201, wantAttempts: []string{"ap-south:503:preferred #1", "us-east-1:200:preferred #2"}},
		{name: "at most MAX_ALLOCATION_ATTEMPTS regions, fallback cut",
			body: `{"gameInstanceId":"gi-sel","preferredRegions":["a","b","c","d"]}`, full: []string{"a", "b", "c", "d"},
			wantStatus: 503, wantAttempts: []string{"a:503:preferred #1", "b:503:preferred #2", "c:503:preferred #3"}},
		{name: "latency ranking: most players, then lowest average",
			body:       `{"gameInstanceId":"gi-sel","playerLatencies":[{"playerId":"p1","latencyMs":{"us-west":42,"custom-eu-central-1":130}},{"playerId":"p2","latencyMs":{"us-west":60}}]}`,
			wantStatus: 201, wantAttempts: []string{"us-west:200:latency #1"}},
		{name: "latency cap drops a region",
			body:       `{"gameInstanceId":"gi-sel","maxPlayerLatencyMs":100,"playerLatencies":[{"playerId":"p1","latencyMs":{"us-west":42,"ap-south":30}},{"playerId":"p2","latencyMs":{"us-west":160,"ap-south":80}}]}`,
			wantStatus: 201, wantAttempts: []string{"ap-south:200:latency #1"}},
		{name: "every region over the cap: unfiltered ranking, said so",
			body: `{"gameInstanceId":"gi-sel","maxPlayerLatencyMs":10,"playerLatencies":[{"playerId":"p1","latencyMs":{"us-west":42,"ap-south":30}}]}`, full: []string{"ap-south"},
			wantStatus: 201, wantAttempts: []string{"ap-south:503:latency #1", "us-west:200:latency #2"}, wantRelaxed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{fallbackRegion: "eu-central-1"})
			for _, region := range []string{"us-west", "eu-central-1", "us-east-1", "ap-south", "a", "b", "c", "d"} {
				e.stub.Always(region, gfemu.Answer{})
			}
			for _, region := range tc.full {
				e.stub.Always(region, gfemu.Answer{Status: 503, Error: "full"})
			}
			r := e.allocate(t, tc.body)
			if r.Status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.wantStatus, r.Raw)
			}
			if got := reasons(r); strings.Join(got, ",") != strings.Join(tc.wantAttempts, ",") {
				t.Fatalf("attempts = %v, want %v", got, tc.wantAttempts)
			}
			if relaxed := r.Body["latencyFilterRelaxed"] == true; relaxed != tc.wantRelaxed {
				t.Fatalf("latencyFilterRelaxed = %v, want %v", relaxed, tc.wantRelaxed)
			}
			// A replay with other region inputs is another request.
			if tc.wantStatus == 201 && strings.Contains(tc.body, "preferredRegions") {
				other := strings.Replace(tc.body, `"preferredRegions":[`, `"preferredRegions":["zz",`, 1)
				e.allocate(t, other).expect(t, http.StatusConflict, "IDEMPOTENCY_MISMATCH")
			}
		})
	}
}
