package agones

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

// The request travels in grpc-gateway's JSON form: enums by name, 64-bit
// integers as strings.
func TestRequestWireForm(t *testing.T) {
	r := AllocationRequest{Namespace: "games", Scheduling: SchedulingPacked,
		GameServerSelectors: []GameServerSelector{{MatchLabels: map[string]string{"env": "prod"}, GameServerState: StateAllocated,
			Counters: map[string]CounterSelector{"rooms": {MinAvailable: 1}}}},
		Counters:   map[string]CounterAction{"rooms": {Action: ActionIncrement, Amount: I64(1)}},
		Priorities: []Priority{{Type: PriorityCounter, Key: "rooms", Order: OrderAscending}},
		Metadata:   &MetaPatch{Annotations: map[string]string{"a": "b"}}}
	raw, _ := json.Marshal(r)
	want := `{"namespace":"games","gameServerSelectors":[{"matchLabels":{"env":"prod"},"gameServerState":"ALLOCATED","counters":{"rooms":{"minAvailable":"1"}}}],` +
		`"scheduling":"Packed","metadata":{"annotations":{"a":"b"}},"priorities":[{"type":"Counter","key":"rooms","order":"Ascending"}],` +
		`"counters":{"rooms":{"action":"Increment","amount":"1"}}}`
	if string(raw) != want {
		t.Fatalf("request =\n%s\nwant\n%s", raw, want)
	}
}

func TestDecodeAllocation(t *testing.T) {
	ok := `{"gameServerName":"fleet-x","ports":[{"name":"game","port":7777},{"name":"query","port":"7778"}],"address":"10.0.0.1",` +
		`"nodeName":"node-1","counters":{"rooms":{"count":"2","capacity":4}}}`
	tests := []struct {
		name, body, wantErr string
		want                Allocation
	}{
		{name: "ok, numbers and strings", body: ok, want: Allocation{GameServerName: "fleet-x", NodeName: "node-1", Address: "10.0.0.1",
			Ports: map[string]int{"game": 7777, "query": 7778}, Counters: map[string]Count{"rooms": {2, 4}}}},
		{name: "address from ExternalDNS", body: `{"address":"","addresses":[{"type":"InternalIP","address":"10.1.1.1"},{"type":"ExternalIP","address":"203.0.113.9"},` +
			`{"type":"ExternalDNS","address":"gs.example"}],"ports":[{"name":"p","port":1}]}`, want: Allocation{Address: "gs.example", Ports: map[string]int{"p": 1}}},
		{name: "address from ExternalIP", body: `{"addresses":[{"type":"ExternalIP","address":"203.0.113.9"}],"ports":[{"name":"p","port":1}]}`,
			want: Allocation{Address: "203.0.113.9", Ports: map[string]int{"p": 1}}},
		{name: "no address", body: `{"ports":[{"name":"p","port":1}],"addresses":[{"type":"InternalIP","address":"10.1.1.1"}]}`, wantErr: "has no address"},
		{name: "no ports", body: `{"address":"10.0.0.1","ports":[]}`, wantErr: "has no ports"},
		{name: "port out of range", body: `{"address":"10.0.0.1","ports":[{"name":"p","port":70000}]}`, wantErr: "1-65535"},
		{name: "duplicate port names", body: `{"address":"10.0.0.1","ports":[{"name":"p","port":1},{"name":"p","port":2}]}`, wantErr: "uniquely named"},
		{name: "port not a number", body: `{"address":"10.0.0.1","ports":[{"name":"p","port":"x"}]}`, wantErr: "not an AllocationResponse"},
		{name: "an address with a path", body: `{"address":"10.0.0.1/x","ports":[{"name":"p","port":1}]}`, wantErr: "not a host name"},
		{name: "not JSON", body: `<html>`, wantErr: "not an AllocationResponse"},
		{name: "too large", body: `{"address":"a","x":"` + strings.Repeat("x", upstreamhttp.MaxResponseBytes) + `"}`, wantErr: "exceeds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAllocation([]byte(tc.body))
			if tc.wantErr != "" {
				var e *upstreamhttp.Error
				if !errors.As(err, &e) || e.Kind != upstreamhttp.KindDecode || !strings.Contains(e.Message, tc.wantErr) || len(e.Body) > upstreamhttp.MaxErrorBodyKept {
					t.Fatalf("err = %v, want a decode error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.Address != tc.want.Address || len(got.Ports) != len(tc.want.Ports) || got.GameServerName != tc.want.GameServerName ||
				got.NodeName != tc.want.NodeName || got.Counters["rooms"] != tc.want.Counters["rooms"] {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			for name, p := range tc.want.Ports {
				if got.Ports[name] != p {
					t.Fatalf("ports = %v", got.Ports)
				}
			}
		})
	}
}

func TestParseIdentity(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	now := time.Now()
	good := secretJSON(t, ca, ca, now.Add(-time.Hour), now.Add(time.Hour))
	var doc map[string]string
	_ = json.Unmarshal([]byte(good), &doc)
	mismatched, _ := json.Marshal(map[string]string{"tls.crt": doc["tls.crt"], "tls.key": mustKey(t, other), "ca.crt": doc["ca.crt"]})
	noCA, _ := json.Marshal(map[string]string{"tls.crt": doc["tls.crt"], "tls.key": doc["tls.key"], "ca.crt": "not a certificate"})
	tests := []struct{ name, secret, wantErr string }{
		{"ok", good, ""},
		{"not JSON", "-----BEGIN CERTIFICATE-----", "must be JSON"},
		{"missing members", `{"tls.crt": "x"}`, "no tls.key, ca.crt"},
		{"key does not match", string(mismatched), "are not a certificate and its private key"},
		{"expired", secretJSON(t, ca, ca, now.Add(-2*time.Hour), now.Add(-time.Hour)), "expired at"},
		{"ca.crt not PEM", string(noCA), "ca.crt holds no PEM certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := ParseIdentity(tc.secret)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, secrets.ErrBadSecret) || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatalf("ParseIdentity = %v, %v; want %q", id, err, tc.wantErr)
			}
		})
	}
	id, _ := ParseIdentity(good)
	if s := id.String() + id.GoString(); !strings.Contains(s, "sha256:") || strings.Contains(s, "PRIVATE") {
		t.Fatalf("identity prints as %q", s)
	}
}

func mustKey(t *testing.T, ca *testCA) string {
	_, key := ca.issue(t, 0, time.Now(), time.Now().Add(time.Hour))
	return string(key)
}

// Mutual TLS: the allocator's certificate is checked against ca.crt alone,
// ours is presented, and a handshake that does not ask for ours, or that
// the allocator refuses, is KindTLS with nothing sent.
func TestClientMutualTLS(t *testing.T) {
	ca, rogue := newCA(t), newCA(t)
	now := time.Now()
	idOf := func(certCA, trust *testCA) *Identity {
		id, err := ParseIdentity(secretJSON(t, certCA, trust, now.Add(-time.Hour), now.Add(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	var requests int
	answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/gameserverallocation" || !json.Valid(body) {
			http.Error(w, "bad", 400)
			return
		}
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"code":8,"message":"there is no available GameServer to allocate","details":[]}`))
	})
	tests := []struct {
		name       string
		serverCA   *testCA // signs the allocator's certificate
		clientsCA  *testCA // the allocator trusts; nil = it asks for no certificate
		id         *Identity
		wantKind   upstreamhttp.Kind
		wantStatus int
	}{
		{"both sides trusted: the allocator's answer", ca, ca, idOf(ca, ca), upstreamhttp.KindStatus, 429},
		{"the allocator's certificate is not ca.crt's", rogue, ca, idOf(ca, ca), upstreamhttp.KindTLS, 0},
		{"our certificate is not one the allocator trusts", ca, rogue, idOf(ca, ca), upstreamhttp.KindTLS, 0},
		{"the allocator asks for no client certificate", ca, nil, idOf(ca, ca), upstreamhttp.KindTLS, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(answer)
			srv.TLS = tc.serverCA.serverTLS(t, tc.clientsCA)
			srv.StartTLS()
			defer srv.Close()
			requests = 0
			_, err := NewClient(srv.URL+"/").Allocate(context.Background(), tc.id, AllocationRequest{Namespace: "default"})
			var e *upstreamhttp.Error
			if !errors.As(err, &e) || e.Kind != tc.wantKind || e.Status != tc.wantStatus || e.Service != Service {
				t.Fatalf("err = %#v, want kind %s status %d", err, tc.wantKind, tc.wantStatus)
			}
			if tc.wantKind == upstreamhttp.KindTLS && (requests != 0 || !e.Unsent || e.MayHaveAllocated()) {
				t.Fatalf("a refused handshake reached the handler %d times (unsent %v)", requests, e.Unsent)
			}
			if tc.wantStatus == 429 && e.Message != "there is no available GameServer to allocate" {
				t.Fatalf("message = %q", e.Message)
			}
		})
	}
}

// A kept body never carries the annotations the answer echoes (our
// payload, tokens included), even cut short.
func TestRedactAnnotations(t *testing.T) {
	for _, body := range []string{
		`{"address":"","metadata":{"annotations":{"agones.dev/sdk-payload-PartnerGameToken":"secret-token"},"labels":{}}}`,
		`{"address":"","metadata":{"annotations":{"agones.dev/sdk-payload-PartnerGameToken":"secret-to`,
	} {
		if got := redactAnnotations(body); strings.Contains(got, "secret") || !strings.Contains(got, "[redacted]") {
			t.Errorf("redactAnnotations(%q) = %q", body, got)
		}
	}
}

// Reading an unchanged secret again keeps the connections; a rotated one
// gets its own, and the kept clients stay bounded.
func TestClientKeepsConnectionsPerIdentity(t *testing.T) {
	ca := newCA(t)
	secret := secretJSON(t, ca, ca, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	a, _ := ParseIdentity(secret)
	b, _ := ParseIdentity(secret)
	c := NewClient("https://127.0.0.1:1")
	if c.httpFor(a) != c.httpFor(b) {
		t.Fatal("the same secret read twice got two clients")
	}
	for range maxIdentities + 2 {
		rotated, _ := ParseIdentity(secretJSON(t, ca, ca, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)))
		if c.httpFor(rotated) == c.httpFor(a) {
			t.Fatal("a rotated identity shares the old one's client")
		}
	}
	if len(c.http) > maxIdentities {
		t.Fatalf("%d clients kept", len(c.http))
	}
}
