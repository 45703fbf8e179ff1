package gfemu

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

const (
	allocTok = "alloc-new"
	regTok   = "reg-tok"
	prefix   = "/allocator/test"
)

func newClock() *harness.Clock { return harness.NewClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) }

// fixture is an emulator behind a real loopback server.
type fixture struct {
	t     *testing.T
	emu   *Emulator
	srv   *httptest.Server
	clock *harness.Clock
}

func newFixture(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	c := newClock()
	cfg := Config{
		Prefix:          prefix,
		AllocatorTokens: []string{"alloc-old", allocTok},
		RegistryTokens:  []string{regTok},
		CallbackTimeout: 300 * time.Millisecond,
		Now:             c.Now,
	}
	if mod != nil {
		mod(&cfg)
	}
	f := &fixture{t: t, emu: New(cfg), clock: c}
	f.srv = httptest.NewServer(f.emu.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

func (r response) errorText(t *testing.T) string {
	t.Helper()
	s, _ := r.json(t)["error"].(string)
	if s == "" {
		t.Fatalf("body %q has no error text", r.body)
	}
	return s
}

func (f *fixture) do(method, path, token, body string) response {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

func (f *fixture) register(body string) response {
	f.t.Helper()
	return f.do(http.MethodPost, prefix+"/servers", regTok, body)
}

func (f *fixture) mustRegister(body string) {
	f.t.Helper()
	if r := f.register(body); r.status != http.StatusCreated && r.status != http.StatusOK {
		f.t.Fatalf("register %s = %d %s", body, r.status, r.body)
	}
}

func (f *fixture) allocate(body string) response {
	f.t.Helper()
	return f.do(http.MethodPost, prefix+"/allocate", allocTok, body)
}

func (f *fixture) addresses() []string {
	var out []string
	for _, s := range f.emu.Servers() {
		out = append(out, s.Address)
	}
	return out
}

// mustJSON marshals test data that cannot fail to marshal.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// gameServer is a game server's allocation callback endpoint.
type gameServer struct {
	srv *httptest.Server

	mu    sync.Mutex
	calls []callbackCall
}

type callbackCall struct {
	auth, contentType, body string
}

func newGameServer(t *testing.T, h http.HandlerFunc) *gameServer {
	t.Helper()
	g := &gameServer{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.calls = append(g.calls, callbackCall{r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(body)})
		g.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func answering(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func (g *gameServer) Calls() []callbackCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]callbackCall(nil), g.calls...)
}

// hostPort is the callback URL the way the sidecar registers it: no scheme.
func (g *gameServer) hostPort() string { return strings.TrimPrefix(g.srv.URL, "http://") }

// registerBody builds a register body whose callback points at g.
func registerBody(addr string, priority int, g *gameServer, token string) string {
	return mustJSON(map[string]any{
		"address": addr, "priority": priority, "region": "us-west",
		"attributes": map[string]string{"env": "prag", "armadaset": "blue"},
		"callback":   map[string]string{"token": token, "url": g.hostPort() + "/allocate"},
		"ports":      map[string]int{"game": 7001, "alloc": 7101},
	})
}
