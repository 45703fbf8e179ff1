//go:build integration

package tests

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Queued placements (issue 23) as docs/openapi.yaml describes them: the
// request's queueTimeoutSeconds and latencyPolicies, the 202 answer, a
// Queued record's GET with Retry-After, and the codes that end it.
func TestQueuedPlacementExchanges(t *testing.T) {
	const (
		queuedBody = `{"gameInstanceId":"gi-1","gameServerVersion":"prag::set",` +
			`"playerLatencies":[{"playerId":"p1","latencyMs":{"us-west":30,"eu-central-1":130}}],` +
			`"queueTimeoutSeconds":60,"latencyPolicies":[{"maxPlayerLatencyMs":50,"durationSeconds":10},{"maxPlayerLatencyMs":200}]}`
		queued = `{"gameInstanceId":"gi-1","state":"Queued","fallbackUsed":false,` +
			`"attempts":[{"region":"us-west","reason":"latency #1 (1 players, avg 30 ms, max 30 ms)","status":503,` +
			`"error":"no game server available","durationMs":14,"maxPlayerLatencyMs":50}],` +
			`"queuedUntil":"2026-11-22T04:32:17.48Z","createdAt":"2026-11-22T04:31:17.48Z","updatedAt":"2026-11-22T04:31:17.53Z"}`
		placed = `{"gameInstanceId":"gi-1","state":"Allocated","region":"us-west","fallbackUsed":false,` +
			`"server":{"address":"203.0.113.10:7777","ip":"203.0.113.10","ports":{"game":7777}},"placement":"allocator",` +
			`"attempts":[{"region":"us-west","status":503,"durationMs":14,"maxPlayerLatencyMs":50},{"region":"us-west","status":200,"durationMs":30,"maxPlayerLatencyMs":50}],` +
			`"queuedUntil":"2026-11-22T04:32:17.48Z","createdAt":"2026-11-22T04:31:17.48Z","updatedAt":"2026-11-22T04:31:21.5Z"}`
		cancelled = `{"gameInstanceId":"gi-1","state":"Failed","fallbackUsed":false,` +
			`"attempts":[{"region":"us-west","status":503,"durationMs":14}],` +
			`"error":{"code":"PLACEMENT_CANCELLED","message":"the queued placement was cancelled"},` +
			`"queuedUntil":"2026-11-22T04:32:17.48Z","createdAt":"2026-11-22T04:31:17.48Z","updatedAt":"2026-11-22T04:31:21Z"}`
	)
	accepted := map[string]string{"Location": "/v1/allocations/gi-1", "Retry-After": "3", "Cache-Control": "no-store"}
	queuedGet := map[string]string{"Retry-After": "3", "Cache-Control": "no-store"}
	timedOut := strings.Replace(cancelled, `"PLACEMENT_CANCELLED","message":"the queued placement was cancelled"`,
		`"PLACEMENT_TIMED_OUT","message":"no game server before queuedUntil"`, 1)
	tests := []struct {
		name, method, path, body string
		answer                   answer
		wantViolation            string
	}{
		{name: "queued", method: "POST", path: "/v1/allocations", body: queuedBody, answer: answer{202, accepted, queued}},
		{name: "placed after queueing", method: "POST", path: "/v1/allocations", body: queuedBody, answer: answer{200, noStore, placed}},
		{name: "202 without Retry-After", method: "POST", path: "/v1/allocations", body: queuedBody,
			answer: answer{202, map[string]string{"Location": "/v1/allocations/gi-1", "Cache-Control": "no-store"}, queued}, wantViolation: "Retry-After"},
		{name: "202 without Location", method: "POST", path: "/v1/allocations", body: queuedBody,
			answer: answer{202, queuedGet, queued}, wantViolation: "Location"},
		{name: "202 not Queued", method: "POST", path: "/v1/allocations", body: queuedBody,
			answer: answer{202, accepted, placed}, wantViolation: "state"},
		{name: "202 without queuedUntil", method: "POST", path: "/v1/allocations", body: queuedBody,
			answer: answer{202, accepted, strings.Replace(queued, `"queuedUntil":"2026-11-22T04:32:17.48Z",`, "", 1)}, wantViolation: "queuedUntil"},
		{name: "timeout out of range accepted", method: "POST", path: "/v1/allocations",
			body:   strings.Replace(queuedBody, `"queueTimeoutSeconds":60`, `"queueTimeoutSeconds":601`, 1),
			answer: answer{202, accepted, queued}, wantViolation: "the request does not match"},
		{name: "timeout out of range refused", method: "POST", path: "/v1/allocations",
			body:   strings.Replace(queuedBody, `"queueTimeoutSeconds":60`, `"queueTimeoutSeconds":601`, 1),
			answer: answer{400, noStore, `{"error":{"code":"INVALID_REQUEST","message":"queueTimeoutSeconds must be 0-600"}}`}},
		{name: "unknown policy field accepted", method: "POST", path: "/v1/allocations",
			body:   strings.Replace(queuedBody, `"durationSeconds":10`, `"durationSeconds":10,"minPlayers":2`, 1),
			answer: answer{202, accepted, queued}, wantViolation: "the request does not match"},
		{name: "policy duration 0 accepted", method: "POST", path: "/v1/allocations",
			body:   strings.Replace(queuedBody, `"durationSeconds":10`, `"durationSeconds":0`, 1),
			answer: answer{202, accepted, queued}, wantViolation: "the request does not match"},
		{name: "queued GET", method: "GET", path: "/v1/allocations/gi-1", answer: answer{200, queuedGet, queued}},
		{name: "timed out GET", method: "GET", path: "/v1/allocations/gi-1", answer: answer{200, noStore, timedOut}},
		{name: "cancelled by DELETE", method: "DELETE", path: "/v1/allocations/gi-1", answer: answer{200, noStore, cancelled}},
		{name: "DELETE during a worker run", method: "DELETE", path: "/v1/allocations/gi-1",
			answer: answer{409, map[string]string{"Retry-After": "1"},
				`{"error":{"code":"ALLOCATION_IN_PROGRESS","message":"an attempt is running; retry","state":"Allocating"}}`}},
	}
	d := document(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var reports []error
			srv := httptest.NewServer(d.Middleware(tc.answer, func(err error) { reports = append(reports, err) }))
			defer srv.Close()
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			checkReports(t, reports, tc.wantViolation)
		})
	}
}
