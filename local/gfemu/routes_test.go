package gfemu

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBearerChecks(t *testing.T) {
	const addr = "127.0.0.1:7001"
	register := `{"address":"` + addr + `","priority":0,"region":"r"}`
	tests := []struct {
		name         string
		pingTokens   []string
		method, path string
		auth         string // full Authorization header
		body         string
		want         int
	}{
		{"register without token", nil, "POST", "/servers", "", register, 401},
		{"register with allocator token", nil, "POST", "/servers", "Bearer " + allocTok, register, 401},
		{"register with basic scheme", nil, "POST", "/servers", "Basic " + regTok, register, 401},
		{"register with registry token", nil, "POST", "/servers", "Bearer " + regTok, register, 200},
		{"register with lowercase scheme", nil, "POST", "/servers", "bearer " + regTok, register, 200},
		{"keep-alive without token", nil, "POST", "/servers/" + addr + "/keepalive", "", "", 401},
		{"keep-alive with allocator token", nil, "POST", "/servers/" + addr + "/keepalive", "Bearer " + allocTok, "", 401},
		{"keep-alive with registry token", nil, "POST", "/servers/" + addr + "/keepalive", "Bearer " + regTok, "", 200},
		{"deregister with wrong token", nil, "DELETE", "/servers/" + addr, "Bearer nope", "", 401},
		{"deregister with allocator token", nil, "DELETE", "/servers/" + addr, "Bearer " + allocTok, "", 401},
		{"allocate without token", nil, "POST", "/allocate", "", `{"region":"r"}`, 401},
		{"allocate with registry token", nil, "POST", "/allocate", "Bearer " + regTok, `{"region":"r"}`, 401},
		{"allocate with bare token", nil, "POST", "/allocate", allocTok, `{"region":"r"}`, 401},
		{"allocate with old allocator token", nil, "POST", "/allocate", "Bearer alloc-old", `{"region":"nowhere"}`, 404},
		{"ping without token", nil, "GET", "/ping", "", "", 401},
		{"ping with registry token", nil, "GET", "/ping", "Bearer " + regTok, "", 401},
		{"ping falls back to allocator tokens", nil, "GET", "/ping", "Bearer " + allocTok, "", 200},
		{"ping with own tokens refuses allocator token", []string{"ping-1", "ping-2"}, "GET", "/ping", "Bearer " + allocTok, "", 401},
		{"ping with own token", []string{"ping-1", "ping-2"}, "GET", "/ping", "Bearer ping-1", "", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *Config) { c.PingTokens = tc.pingTokens })
			f.mustRegister(register)
			path := tc.path
			if path != "/ping" {
				path = prefix + path
			}
			req, err := http.NewRequest(tc.method, f.srv.URL+path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 401 && resp.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Fatal("401 without WWW-Authenticate: Bearer")
			}
			if tc.want == 401 && len(f.emu.Servers()) != 1 {
				t.Fatal("an unauthorized request changed the registry")
			}
		})
	}
}

func TestNoTokensConfiguredRefusesEverything(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.AllocatorTokens, c.RegistryTokens = nil, []string{""} })
	for _, tc := range []struct{ method, path, token string }{
		{"POST", prefix + "/servers", ""},
		{"POST", prefix + "/allocate", ""},
		{"GET", "/ping", ""},
	} {
		req, _ := http.NewRequest(tc.method, f.srv.URL+tc.path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer ")
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s %s = %d, want 401", tc.method, tc.path, resp.StatusCode)
		}
	}
}

func TestUnknownRoutesAreJSON(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		method, path string
		want         int
		allow        string
	}{
		{"GET", "/", 404, ""},
		{"POST", "/allocator/other/allocate", 404, ""},
		{"POST", prefix + "/servers/a/b/c", 404, ""},
		{"GET", prefix + "/allocate", 405, "POST"},
		{"PUT", prefix + "/servers", 405, "POST"},
		{"POST", "/ping", 405, "GET, HEAD"},
	}
	for _, tc := range tests {
		r := f.do(tc.method, tc.path, allocTok, "")
		if r.status != tc.want || r.header.Get("Content-Type") != "application/json" || r.errorText(t) == "" {
			t.Fatalf("%s %s = %d %q %s, want %d JSON", tc.method, tc.path, r.status, r.header.Get("Content-Type"), r.body, tc.want)
		}
		if r.header.Get("Allow") != tc.allow {
			t.Fatalf("%s %s: Allow = %q, want %q", tc.method, tc.path, r.header.Get("Allow"), tc.allow)
		}
	}
}

func TestPrefixNormalized(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", DefaultPrefix},
		{"allocator/eu/", "/allocator/eu"},
		{"/", ""},
	}
	for _, tc := range tests {
		e := New(Config{Prefix: tc.in, RegistryTokens: []string{regTok}})
		if e.Prefix() != tc.want {
			t.Fatalf("Prefix(%q) = %q, want %q", tc.in, e.Prefix(), tc.want)
		}
		req := httptest.NewRequest(http.MethodPost, tc.want+"/servers", strings.NewReader(`{"address":"127.0.0.1:1","priority":0}`))
		req.Header.Set("Authorization", "Bearer "+regTok)
		rec := httptest.NewRecorder()
		e.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("register under prefix %q = %d %s", tc.want, rec.Code, rec.Body)
		}
	}
}
