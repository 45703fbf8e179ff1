package gfemu

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRegisterValidation(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name    string
		body    string
		wantErr string // "" = accepted
	}{
		{name: "minimal", body: `{"address":"127.0.0.1:7001","priority":0}`},
		{name: "full", body: `{"address":"127.0.0.1:7002","attributes":{"env":"prag","armadaset":"a"},"requiredAttributes":["env"],
			"callback":{"token":"cb","url":"127.0.0.1:7102/allocate"},"ports":{"game":7002,"alloc":7102,"ping":7002},"priority":3,"region":"us-west","timeout":30}`},
		// The body in GameFabric's "Manually registering game servers", verbatim.
		{name: "the docs' example", body: `{"address": "1.2.3.4:1234", "attributes": {"environment": "production"},
			"callback": {"token": "3a1sd321ad5ad5a4d5a24d3sa5d4as", "url": "1.2.3.4:3999/allocate"},
			"ports": {"game": 5000, "alloc": 3999}, "priority": 0, "region": "eu-west", "timeout": 60}`},
		{name: "host name and ipv6", body: `{"address":"[::1]:7003","priority":0,"callback":{"token":"cb","url":"https://gs.local:8443/a"}}`},
		{name: "empty body", body: ``, wantErr: "body is empty"},
		{name: "not JSON", body: `{"address":`, wantErr: "invalid JSON body"},
		{name: "trailing data", body: `{"address":"127.0.0.1:1","priority":0} {}`, wantErr: "data after"},
		{name: "unknown field", body: `{"address":"127.0.0.1:1","priority":0,"required_attributes":["env"]}`, wantErr: `unknown field "required_attributes"`},
		{name: "missing address", body: `{"priority":0}`, wantErr: "address is required"},
		{name: "address without port", body: `{"address":"127.0.0.1","priority":0}`, wantErr: "must be host:port"},
		{name: "address without host", body: `{"address":":7001","priority":0}`, wantErr: "must be host:port"},
		{name: "address port zero", body: `{"address":"127.0.0.1:0","priority":0}`, wantErr: "port 1-65535"},
		{name: "address port too big", body: `{"address":"127.0.0.1:70000","priority":0}`, wantErr: "port 1-65535"},
		{name: "address port not numeric", body: `{"address":"127.0.0.1:game","priority":0}`, wantErr: "port 1-65535"},
		{name: "missing priority", body: `{"address":"127.0.0.1:1"}`, wantErr: "priority is required"},
		{name: "negative priority", body: `{"address":"127.0.0.1:1","priority":-1}`, wantErr: "priority must be >= 0"},
		{name: "priority as string", body: `{"address":"127.0.0.1:1","priority":"0"}`, wantErr: "priority"},
		{name: "attribute not a string", body: `{"address":"127.0.0.1:1","priority":0,"attributes":{"env":1}}`, wantErr: "invalid JSON body"},
		{name: "attribute empty key", body: `{"address":"127.0.0.1:1","priority":0,"attributes":{"":"x"}}`, wantErr: "empty key"},
		// Nothing GameFabric does not document is required: a required key
		// the server lacks only makes it unmatchable, and the callback
		// token is merely recommended.
		{name: "required attribute not offered", body: `{"address":"127.0.0.1:8","priority":0,"attributes":{"env":"x"},"requiredAttributes":["armadaset"]}`},
		{name: "callback without token", body: `{"address":"127.0.0.1:9","priority":0,"callback":{"url":"127.0.0.1:2/a"}}`},
		{name: "required attribute empty key", body: `{"address":"127.0.0.1:1","priority":0,"requiredAttributes":[" "]}`, wantErr: "empty key"},
		{name: "callback without url", body: `{"address":"127.0.0.1:1","priority":0,"callback":{"token":"cb"}}`, wantErr: "callback.url is required"},
		{name: "callback bad scheme", body: `{"address":"127.0.0.1:1","priority":0,"callback":{"token":"cb","url":"ftp://127.0.0.1:2/a"}}`, wantErr: "callback.url"},
		{name: "callback no host", body: `{"address":"127.0.0.1:1","priority":0,"callback":{"token":"cb","url":"http:///a"}}`, wantErr: "callback.url"},
		{name: "port out of range", body: `{"address":"127.0.0.1:1","priority":0,"ports":{"game":0}}`, wantErr: `port "game" must be 1-65535`},
		{name: "timeout zero", body: `{"address":"127.0.0.1:1","priority":0,"timeout":0}`, wantErr: "timeout must be"},
		{name: "timeout too long", body: `{"address":"127.0.0.1:1","priority":0,"timeout":60000000}`, wantErr: "timeout must be"},
		{name: "region with spaces", body: `{"address":"127.0.0.1:1","priority":0,"region":" us-west"}`, wantErr: "surrounding spaces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.register(tc.body)
			if tc.wantErr == "" {
				if r.status != http.StatusCreated {
					t.Fatalf("status = %d %s, want 201", r.status, r.body)
				}
				return
			}
			if r.status != http.StatusBadRequest {
				t.Fatalf("status = %d %s, want 400", r.status, r.body)
			}
			if msg := r.errorText(t); !strings.Contains(msg, tc.wantErr) {
				t.Fatalf("error = %q, want it to contain %q", msg, tc.wantErr)
			}
		})
	}
	if got, want := f.addresses(), []string{"127.0.0.1:7001", "127.0.0.1:8", "127.0.0.1:9", "[::1]:7003", "1.2.3.4:1234", "127.0.0.1:7002"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("registered = %v, want only the accepted ones, by region then address: %v", got, want)
	}
}

func TestRegisterStoresNormalizedServer(t *testing.T) {
	f := newFixture(t, nil)
	r := f.register(`{"address":"127.0.0.1:7001","attributes":{"env":"prag"},"requiredAttributes":["env"],
		"callback":{"token":"cb","url":"127.0.0.1:7101/allocate"},"ports":{"game":7001},"priority":2,"region":"us-west"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("register = %d %s", r.status, r.body)
	}
	if got := r.json(t); got["address"] != "127.0.0.1:7001" || got["timeout"] != float64(60) {
		t.Fatalf("answer = %v", got)
	}
	now := f.clock.Now()
	want := Server{
		Address: "127.0.0.1:7001", Region: "us-west", Priority: 2,
		Attributes: map[string]string{"env": "prag"}, RequiredAttributes: []string{"env"},
		Callback: &Callback{Token: "cb", URL: "http://127.0.0.1:7101/allocate"},
		Ports:    map[string]int{"game": 7001}, Timeout: 60 * time.Second,
		RegisteredAt: now, ExpiresAt: now.Add(60 * time.Second),
	}
	got := f.emu.Servers()
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("Servers() = %+v, want %+v", got, want)
	}
	got[0].Attributes["env"] = "changed"
	if f.emu.Servers()[0].Attributes["env"] != "prag" {
		t.Fatal("Servers() shares maps with the registry")
	}
}

func TestRegisterReplacesSameAddress(t *testing.T) {
	f := newFixture(t, nil)
	f.mustRegister(`{"address":"127.0.0.1:1","priority":5,"region":"a"}`)
	r := f.register(`{"address":"127.0.0.1:1","priority":1,"region":"b"}`)
	if r.status != http.StatusOK {
		t.Fatalf("re-register = %d, want 200", r.status)
	}
	got := f.emu.Servers()
	if len(got) != 1 || got[0].Region != "b" || got[0].Priority != 1 {
		t.Fatalf("Servers() = %+v, want the replacement only", got)
	}
}

func TestServersSorted(t *testing.T) {
	f := newFixture(t, nil)
	for _, b := range []string{
		`{"address":"10.0.0.9:1","priority":0,"region":"us"}`,
		`{"address":"10.0.0.1:1","priority":1,"region":"us"}`,
		`{"address":"10.0.0.5:1","priority":0,"region":"eu"}`,
		`{"address":"10.0.0.2:1","priority":0,"region":"us"}`,
	} {
		f.mustRegister(b)
	}
	want := []string{"10.0.0.5:1", "10.0.0.2:1", "10.0.0.9:1", "10.0.0.1:1"}
	if got := f.addresses(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Servers() order = %v, want %v", got, want)
	}
}

func TestKeepAliveAndExpiry(t *testing.T) {
	const addr = "127.0.0.1:7001"
	keepAlive := func(f *fixture, body string) response {
		return f.do(http.MethodPost, prefix+"/servers/"+addr+"/keepalive", regTok, body)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"expires only after the timeout has passed", func(t *testing.T, f *fixture) {
			f.clock.Advance(10 * time.Second)
			if len(f.emu.Servers()) != 1 {
				t.Fatal("gone at exactly its timeout")
			}
			f.clock.Advance(time.Nanosecond)
			if len(f.emu.Servers()) != 0 {
				t.Fatal("still registered after its timeout")
			}
		}},
		{"keep-alive extends from now", func(t *testing.T, f *fixture) {
			f.clock.Advance(8 * time.Second)
			if r := keepAlive(f, ""); r.status != http.StatusOK {
				t.Fatalf("keep-alive = %d %s", r.status, r.body)
			}
			f.clock.Advance(9 * time.Second) // 17s after registration, 9s after keep-alive
			if len(f.emu.Servers()) != 1 {
				t.Fatal("keep-alive did not extend the expiry")
			}
			f.clock.Advance(2 * time.Second)
			if len(f.emu.Servers()) != 0 {
				t.Fatal("keep-alive extended by more than the timeout")
			}
		}},
		{"keep-alive may change the timeout", func(t *testing.T, f *fixture) {
			r := keepAlive(f, `{"timeout":30}`)
			if r.status != http.StatusOK || r.json(t)["timeout"] != float64(30) {
				t.Fatalf("keep-alive = %d %s", r.status, r.body)
			}
			f.clock.Advance(29 * time.Second)
			if r := keepAlive(f, `{}`); r.status != http.StatusOK {
				t.Fatalf("second keep-alive = %d %s", r.status, r.body)
			}
			f.clock.Advance(30 * time.Second)
			if len(f.emu.Servers()) != 1 {
				t.Fatal("the new timeout was not kept")
			}
		}},
		{"keep-alive after expiry is 404", func(t *testing.T, f *fixture) {
			f.clock.Advance(11 * time.Second)
			if r := keepAlive(f, ""); r.status != http.StatusNotFound || !strings.Contains(r.errorText(t), "not registered") {
				t.Fatalf("keep-alive = %d %s, want 404", r.status, r.body)
			}
		}},
		{"keep-alive after allocation is 404", func(t *testing.T, f *fixture) {
			if r := f.allocate(`{"region":"r"}`); r.status != http.StatusOK {
				t.Fatalf("allocate = %d %s", r.status, r.body)
			}
			if r := keepAlive(f, ""); r.status != http.StatusNotFound {
				t.Fatalf("keep-alive = %d %s, want 404", r.status, r.body)
			}
		}},
		{"keep-alive for an unknown address is 404", func(t *testing.T, f *fixture) {
			r := f.do(http.MethodPost, prefix+"/servers/127.0.0.1:9/keepalive", regTok, "")
			if r.status != http.StatusNotFound {
				t.Fatalf("keep-alive = %d, want 404", r.status)
			}
		}},
		{"keep-alive validates its body", func(t *testing.T, f *fixture) {
			for _, body := range []string{`{"timeout":0}`, `{"timeout":"60"}`, `{"ttl":5}`} {
				if r := keepAlive(f, body); r.status != http.StatusBadRequest {
					t.Fatalf("keep-alive %s = %d, want 400", body, r.status)
				}
			}
		}},
		{"re-register after expiry starts afresh", func(t *testing.T, f *fixture) {
			f.clock.Advance(time.Minute)
			if r := f.register(`{"address":"` + addr + `","priority":0}`); r.status != http.StatusCreated {
				t.Fatalf("re-register = %d, want 201 (the old one expired)", r.status)
			}
		}},
		{"deregister", func(t *testing.T, f *fixture) {
			if r := f.do(http.MethodDelete, prefix+"/servers/"+addr, regTok, ""); r.status != http.StatusNoContent {
				t.Fatalf("deregister = %d %s, want 204", r.status, r.body)
			}
			if len(f.emu.Servers()) != 0 {
				t.Fatal("still registered after deregister")
			}
			if r := f.do(http.MethodDelete, prefix+"/servers/"+addr, regTok, ""); r.status != http.StatusNotFound {
				t.Fatalf("second deregister = %d, want 404", r.status)
			}
			if r := keepAlive(f, ""); r.status != http.StatusNotFound {
				t.Fatalf("keep-alive after deregister = %d, want 404", r.status)
			}
		}},
		{"deregister after expiry is 404", func(t *testing.T, f *fixture) {
			f.clock.Advance(11 * time.Second)
			if r := f.do(http.MethodDelete, prefix+"/servers/"+addr, regTok, ""); r.status != http.StatusNotFound {
				t.Fatalf("deregister = %d, want 404", r.status)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.mustRegister(`{"address":"` + addr + `","priority":0,"region":"r","timeout":10}`)
			tc.run(t, f)
		})
	}
}

func TestEscapedAddressInPath(t *testing.T) {
	f := newFixture(t, nil)
	f.mustRegister(`{"address":"[::1]:7001","priority":0}`)
	if r := f.do(http.MethodPost, prefix+"/servers/%5B::1%5D:7001/keepalive", regTok, ""); r.status != http.StatusOK {
		t.Fatalf("keep-alive = %d %s", r.status, r.body)
	}
	if r := f.do(http.MethodDelete, prefix+"/servers/[::1]:7001", regTok, ""); r.status != http.StatusNoContent {
		t.Fatalf("deregister = %d %s", r.status, r.body)
	}
}
