package gamefabric

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestDecodePing(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    map[string][]PingTarget
		wantErr string
	}{
		{name: "canonical", body: `{"regions":{"us-west":[{"address":"203.0.113.10","port":7600,"protocol":"udp"}],"EU-Central-1":[{"address":"198.51.100.7","port":7600}]}}`,
			want: map[string][]PingTarget{"us-west": {{"203.0.113.10", 7600, "udp"}}, "eu-central-1": {{"198.51.100.7", 7600, "udp"}}}},
		{name: "empty regions", body: `{"regions":{}}`, want: map[string][]PingTarget{}},
		{name: "region without targets", body: `{"regions":{"us-west":[]}}`, want: map[string][]PingTarget{"us-west": {}}},
		{name: "tcp", body: `{"regions":{"r":[{"address":"ping.example","port":1,"protocol":"TCP"}]}}`, want: map[string][]PingTarget{"r": {{"ping.example", 1, "tcp"}}}},
		{name: "missing regions", body: `{}`, wantErr: `no "regions" object`},
		{name: "other shape", body: `{"us-west":["1.2.3.4"]}`, wantErr: `unknown field "us-west"`},
		{name: "list instead of map", body: `{"regions":[{"region":"us-west"}]}`, wantErr: "does not parse"},
		{name: "unknown target field", body: `{"regions":{"r":[{"address":"1.2.3.4","port":1,"ttl":3}]}}`, wantErr: `unknown field "ttl"`},
		{name: "no address", body: `{"regions":{"r":[{"port":7600}]}}`, wantErr: "address must be"},
		{name: "bad port", body: `{"regions":{"r":[{"address":"1.2.3.4","port":70000}]}}`, wantErr: "port must be"},
		{name: "bad protocol", body: `{"regions":{"r":[{"address":"1.2.3.4","port":1,"protocol":"icmp"}]}}`, wantErr: "protocol must be"},
		{name: "duplicate region", body: `{"regions":{"r":[],"R":[]}}`, wantErr: "twice"},
		{name: "trailing data", body: `{"regions":{}} {}`, wantErr: "data after"},
		{name: "too large", body: `{"regions":{},"x":"` + strings.Repeat("a", MaxResponseBytes) + `"}`, wantErr: "exceeds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodePing([]byte(tc.body))
			if tc.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindDecode || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "expected {") {
					t.Fatalf("err = %v, want a decode error containing %q and the expected shape", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("DecodePing = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestPingClientFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/ping" || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid token"}`))
			return
		}
		_, _ = w.Write([]byte(`{"regions":{"us-west":[{"address":"127.0.0.1","port":7600}]}}`))
	}))
	defer srv.Close()
	c := NewPingClient(srv.Client(), srv.URL+"/ping")
	got, err := c.Fetch(context.Background(), "tok")
	if err != nil || len(got["us-west"]) != 1 {
		t.Fatalf("Fetch = %v, %v", got, err)
	}
	_, err = c.Fetch(context.Background(), "wrong")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Message != "invalid token" {
		t.Fatalf("err = %v, want a 401 status error", err)
	}
}
