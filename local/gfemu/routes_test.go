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
		method, path string
		auth         string // full Authorization header
		body         string
		want         int
	}{
		{"register without token", "POST", "/servers", "", register, 401},
		{"register with allocator token", "POST", "/servers", "Bearer " + allocTok, register, 401},
		{"register with basic scheme", "POST", "/servers", "Basic " + regTok, register, 401},
		{"register with registry token", "POST", "/servers", "Bearer " + regTok, register, 200},
		{"register with lowercase scheme", "POST", "/servers", "bearer " + regTok, register, 200},
		{"keep-alive without token", "POST", "/servers/" + addr + "/keepalive", "", "", 401},
		{"keep-alive with allocator token", "POST", "/servers/" + addr + "/keepalive", "Bearer " + allocTok, "", 401},
		{"keep-alive with registry token", "POST", "/servers/" + addr + "/keepalive", "Bearer " + regTok, "", 200},
		{"deregister with wrong token", "DELETE", "/servers/" + addr, "Bearer nope", "", 401},
		{"deregister with allocator token", "DELETE", "/servers/" + addr, "Bearer " + allocTok, "", 401},
		{"allocate without token", "POST", "/allocate", "", `{"region":"r"}`, 401},
		{"allocate with registry token", "POST", "/allocate", "Bearer " + regTok, `{"region":"r"}`, 401},
		{"allocate with bare token", "POST", "/allocate", allocTok, `{"region":"r"}`, 401},
		{"allocate with old allocator token", "POST", "/allocate", "Bearer alloc-old", `{"region":"nowhere"}`, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.mustRegister(register)
			req, err := http.NewRequest(tc.method, f.srv.URL+prefix+tc.path, strings.NewReader(tc.body))
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
		// An Allocator has no ping route: the Ping Service is its own service.
		{"GET", "/ping", 404, ""},
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
