package gamefabric

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAllocate(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		header    map[string]string
		wantKind  Kind
		wantMsg   string
		wantRetry time.Duration
		wantAddr  string
		wantIP    string
	}{
		{name: "success", status: 200, body: `{"address":"1.2.3.4:7777","ip":"1.2.3.4","ports":{"game":7777},"token":"cb","payload":{"ok":true}}`, wantAddr: "1.2.3.4:7777", wantIP: "1.2.3.4"},
		{name: "success derives ip", status: 200, body: `{"address":"1.2.3.4:7777","ports":{"game":7777}}`, wantAddr: "1.2.3.4:7777", wantIP: "1.2.3.4"},
		{name: "missing address", status: 200, body: `{"ip":"1.2.3.4"}`, wantKind: KindDecode, wantMsg: "no address"},
		{name: "malformed", status: 200, body: `{"address":`, wantKind: KindDecode, wantMsg: "not an allocation"},
		{name: "too large", status: 200, body: `{"address":"1.2.3.4:1","pad":"` + strings.Repeat("x", MaxResponseBytes) + `"}`, wantKind: KindDecode, wantMsg: "exceeds"},
		{name: "error body", status: 404, body: `{"error":"no server found"}`, wantKind: KindStatus, wantMsg: "no server found"},
		{name: "status text fallback", status: 502, body: `<html>`, wantKind: KindStatus, wantMsg: "Bad Gateway"},
		{name: "429 retry-after", status: 429, body: `{}`, header: map[string]string{"Retry-After": "3"}, wantKind: KindStatus, wantRetry: 3 * time.Second},
		// What GameFabric controls is bounded where it enters.
		{name: "900 KB error text", status: 503, body: `{"error":"` + strings.Repeat("full ", 180_000) + `"}`, wantKind: KindStatus, wantMsg: "full full"},
		{name: "40,000 ports", status: 200, body: manyPorts(40_000), wantKind: KindDecode, wantMsg: "40000 ports"},
		{name: "33 ports", status: 200, body: manyPorts(MaxPorts + 1), wantKind: KindDecode, wantMsg: "more than 32"},
		{name: "32 ports", status: 200, body: manyPorts(MaxPorts), wantAddr: "1.2.3.4:7777", wantIP: "1.2.3.4"},
		{name: "port out of range", status: 200, body: `{"address":"1.2.3.4:7777","ports":{"game":70000}}`, wantKind: KindDecode, wantMsg: "1-65535"},
		{name: "unnamed port", status: 200, body: `{"address":"1.2.3.4:7777","ports":{"":7777}}`, wantKind: KindDecode, wantMsg: "not named"},
		{name: "address too long", status: 200, body: `{"address":"` + strings.Repeat("a", MaxAddressLen) + `:1"}`, wantKind: KindDecode, wantMsg: "longer than 255"},
		{name: "ip too long", status: 200, body: `{"address":"1.2.3.4:1","ip":"` + strings.Repeat("1", MaxAddressLen+1) + `"}`, wantKind: KindDecode, wantMsg: "longer than 255"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got AllocateRequest
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer tok" || r.Method != http.MethodPost || r.URL.Path != "/allocator/allocate" {
					http.Error(w, `{"error":"bad request line"}`, 400)
					return
				}
				b, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(b, &got)
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := NewClient(srv.Client(), srv.URL+"/allocator/allocate")
			a, err := c.Allocate(context.Background(), "tok", AllocateRequest{Region: "us-west", Attributes: map[string]string{"env": "e"}, Payload: map[string]string{"k": "v"}})
			if got.Region != "us-west" || got.Attributes["env"] != "e" {
				t.Fatalf("server saw %+v", got)
			}
			if tc.wantKind == 0 {
				if err != nil || a.Address != tc.wantAddr || a.IP != tc.wantIP {
					t.Fatalf("Allocate = %+v, %v", a, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.wantKind || !strings.Contains(e.Message, tc.wantMsg) || e.RetryAfter != tc.wantRetry {
				t.Fatalf("err = %#v, want kind %s containing %q", err, tc.wantKind, tc.wantMsg)
			}
			if len(e.Body) > MaxErrorBodyKept || len(e.Message) > MaxErrorText {
				t.Fatalf("kept %d body and %d message bytes", len(e.Body), len(e.Message))
			}
		})
	}
}

func TestAllocateTimeoutAndTransport(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices the client hanging up only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer slow.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := NewClient(slow.Client(), slow.URL).Allocate(ctx, "t", AllocateRequest{Region: "r"})
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindTimeout || !e.MayHaveAllocated() {
		t.Fatalf("slow: err = %v, want a timeout that may have allocated", err)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	_, err = NewClient(http.DefaultClient, url).Allocate(context.Background(), "t", AllocateRequest{Region: "r"})
	if !errors.As(err, &e) || e.Kind != KindTransport || !e.Unsent || e.MayHaveAllocated() {
		t.Fatalf("refused: err = %#v, want an unsent transport error", err)
	}
}

// manyPorts is a 200 whose ports map has n entries.
func manyPorts(n int) string {
	ports := make(map[string]int, n)
	for i := range n {
		ports[fmt.Sprintf("p%d", i)] = 1 + i%65535
	}
	body, _ := json.Marshal(map[string]any{"address": "1.2.3.4:7777", "ip": "1.2.3.4", "ports": ports})
	return string(body)
}

// Only an answer that proves nothing was handed out clears an attempt of
// having allocated: a timeout, a broken or unusable 2xx or the gateway's
// 504 may each have left a server allocated upstream.
func TestMayHaveAllocated(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want bool
	}{
		{"timeout", &Error{Kind: KindTimeout}, true},
		{"dial timeout", &Error{Kind: KindTimeout, Unsent: true}, false},
		{"reset mid-body", &Error{Kind: KindTransport}, true},
		{"connection refused", &Error{Kind: KindTransport, Unsent: true}, false},
		{"unusable 2xx", &Error{Kind: KindDecode}, true},
		{"gateway timeout", &Error{Kind: KindStatus, Status: 504}, true},
		{"no capacity", &Error{Kind: KindStatus, Status: 404}, false},
		{"rate limited", &Error{Kind: KindStatus, Status: 429}, false},
		{"server error", &Error{Kind: KindStatus, Status: 500}, false},
	}
	for _, tc := range tests {
		if got := tc.err.MayHaveAllocated(); got != tc.want {
			t.Errorf("%s: MayHaveAllocated = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An undecodable 2xx body is kept for diagnosis, never with the callback
// token GameFabric put in it.
func TestDecodeAllocationRedactsCallbackToken(t *testing.T) {
	for _, body := range []string{
		`{"ip":"10.0.0.1","token":"cb-secret-1"}`,                   // no address
		`{"address":"10.0.0.1:7777","token":"cb-secret-1","ports":`, // cut short after the token
		`{"Token" : "cb-secret-1\"x", "address": 5}`,                // escaped quote, wrong type, other case
		`{"address":"","token":"cb-secret-1`,                        // cut short inside the token
	} {
		_, err := DecodeAllocation([]byte(body))
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindDecode {
			t.Fatalf("%s: err = %v, want a decode error", body, err)
		}
		if strings.Contains(e.Body, "cb-secret") || !strings.Contains(e.Body, "[redacted]") {
			t.Fatalf("%s: kept body %q", body, e.Body)
		}
	}
}
