package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// fakeRegistry stands in for the allocator's registry.
type fakeRegistry struct {
	*httptest.Server
	token string

	mu               sync.Mutex
	registrations    []registration
	registerFailures int // answer 500 to this many registrations first
	keepAlives       []string
	keepAlive404s    int // answer 404 to this many keep-alives first
	deletes          []string
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	f := &fakeRegistry{token: "registry-secret-7f3a"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /servers", func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(w, r) {
			return
		}
		var body registration
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.registerFailures > 0 {
			f.registerFailures--
			http.Error(w, `{"error":"try later"}`, http.StatusInternalServerError)
			return
		}
		f.registrations = append(f.registrations, body)
	})
	mux.HandleFunc("POST /servers/{addr}/keepalive", func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(w, r) {
			return
		}
		var body struct{ Timeout int }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Timeout < 1 {
			http.Error(w, "bad keep-alive", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.keepAlives = append(f.keepAlives, r.PathValue("addr"))
		if f.keepAlive404s > 0 {
			f.keepAlive404s--
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		}
	})
	mux.HandleFunc("DELETE /servers/{addr}", func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(w, r) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.deletes = append(f.deletes, r.PathValue("addr"))
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeRegistry) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return false
	}
	return true
}

func (f *fakeRegistry) snapshot() (regs []registration, keepAlives, deletes []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]registration(nil), f.registrations...), append([]string(nil), f.keepAlives...),
		append([]string(nil), f.deletes...)
}

// fakeBackend stands in for the link-back API.
type fakeBackend struct {
	*httptest.Server
	token string // every instance's PartnerGameToken, but those in tokens

	mu             sync.Mutex
	tokens         map[string]string // game instance → its own token
	linkStatuses   []int             // answers to successive links; 200 once exhausted
	links          []gameserver.LinkRequest
	linkAttempts   map[string]int // by game instance, refused ones included
	heartbeats     int
	heartbeatState string            // every instance's, but those in states
	states         map[string]string // game instance → the state its heartbeats answer
	beats          []heartbeatCall   // every heartbeat, in order
	ends           []string
	calls          []backendCall // links and ends, in order
}

// heartbeatCall is one heartbeat the backend answered: through which
// instance's token, and whether it asked for all sessions.
type heartbeatCall struct {
	id  string
	all bool
	at  time.Time
}

// backendCall is one link or end the backend recorded.
type backendCall struct {
	op, id string
	link   gameserver.LinkRequest // of a link
	reason string                 // of an end
}

func newFakeBackend(t *testing.T, token string) *fakeBackend {
	f := &fakeBackend{token: token, heartbeatState: "Linked", tokens: map[string]string{}, linkAttempts: map[string]int{},
		states: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/game-instances/{id}/{op}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		f.mu.Lock()
		defer f.mu.Unlock()
		token, ok := f.tokens[id]
		if !ok {
			token = f.token
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		answer := map[string]any{"gameInstanceId": id}
		state := "Linked"
		switch r.PathValue("op") {
		case "link":
			f.linkAttempts[id]++
			if len(f.linkStatuses) > 0 {
				status := f.linkStatuses[0]
				f.linkStatuses = f.linkStatuses[1:]
				if status != http.StatusOK {
					http.Error(w, `{"error":"scripted"}`, status)
					return
				}
			}
			var body gameserver.LinkRequest
			dec := json.NewDecoder(r.Body)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			f.links = append(f.links, body)
			f.calls = append(f.calls, backendCall{op: "link", id: id, link: body})
		case "heartbeat":
			// The SDK's plain heartbeat has no body; HeartbeatSessions
			// sends {"allSessions": true}.
			var body struct{ AllSessions bool }
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			f.heartbeats++
			f.beats = append(f.beats, heartbeatCall{id: id, all: body.AllSessions, at: time.Now()})
			state = f.stateOf(id)
			if body.AllSessions {
				answer["sessions"] = f.others(id)
			}
		case "end":
			var body struct{ Reason string }
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			f.ends = append(f.ends, body.Reason)
			f.calls = append(f.calls, backendCall{op: "end", id: id, reason: body.Reason})
			state = "Ended"
		default:
			http.NotFound(w, r)
			return
		}
		answer["state"] = state
		writeJSON(w, http.StatusOK, answer)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// stateOf is the state id's heartbeats answer; f.mu is held.
func (f *fakeBackend) stateOf(id string) string {
	if s, ok := f.states[id]; ok {
		return s
	}
	return f.heartbeatState
}

// others is an all-sessions heartbeat's sessions: every other instance
// that linked, Ended once it ended, else as its heartbeats would answer.
// f.mu is held.
func (f *fakeBackend) others(id string) []gameserver.Session {
	states := map[string]string{}
	for _, c := range f.calls {
		switch {
		case c.id == id:
		case c.op == "end":
			states[c.id] = "Ended"
		case states[c.id] == "":
			states[c.id] = f.stateOf(c.id)
		}
	}
	out := []gameserver.Session{}
	for _, other := range slices.Sorted(maps.Keys(states)) {
		out = append(out, gameserver.Session{GameInstanceID: other, State: gameserver.State(states[other])})
	}
	return out
}

// heartbeatCalls is every heartbeat answered so far.
func (f *fakeBackend) heartbeatCalls() []heartbeatCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]heartbeatCall(nil), f.beats...)
}

func (f *fakeBackend) snapshot() (links []gameserver.LinkRequest, heartbeats int, ends []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gameserver.LinkRequest(nil), f.links...), f.heartbeats, append([]string(nil), f.ends...)
}

// history is every link and end recorded so far, and how many links
// each instance attempted.
func (f *fakeBackend) history() ([]backendCall, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	attempts := make(map[string]int, len(f.linkAttempts))
	maps.Copy(attempts, f.linkAttempts)
	return append([]backendCall(nil), f.calls...), attempts
}

// instance makes id's PartnerGameToken token.
func (f *fakeBackend) instance(id, token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[id] = token
}

func (f *fakeBackend) setHeartbeatState(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heartbeatState = s
}

// setInstanceState makes id's heartbeats, and the all-sessions answers
// listing it, say s.
func (f *fakeBackend) setInstanceState(id, s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states[id] = s
}

// harness runs the server in-process against the fakes.
type harness struct {
	t        *testing.T
	cfg      Config
	registry *fakeRegistry
	backend  *fakeBackend
	logs     *testkit.SyncBuffer
	cancel   context.CancelFunc
	done     chan error
	payload  map[string]any
}

const partnerToken = "pgt-secret-91c2d"

// startHarness starts the server; tune may adjust the configuration and
// script the fakes first.
func startHarness(t *testing.T, tune func(*harness)) *harness {
	t.Helper()
	h := &harness{t: t, registry: newFakeRegistry(t), backend: newFakeBackend(t, partnerToken), logs: &testkit.SyncBuffer{},
		done: make(chan error, 1)}
	h.cfg = Config{
		RegistryURL: h.registry.URL + "/servers", Region: "us-west", RegistryToken: h.registry.token, Priority: 1,
		Attributes:    map[string]string{"env": "prag", "armadaset": "sample-game-armada-set"},
		RequiredAttrs: []string{"armadaset"}, PayloadFile: filepath.Join(t.TempDir(), "payload.json"),
		RegistryTimeout: 300 * time.Millisecond, Host: "127.0.0.1", HeartbeatInterval: 50 * time.Millisecond,
		MaxGameLength: time.Minute, Logs: h.logs,
	}
	h.payload = map[string]any{
		"GameInstanceId": "gi-42", "PartnerGameToken": partnerToken, "PartnerSocialToken": "pst-secret-e0a1",
		"pragmaBackendAddress": h.backend.URL, "ServerArgs": "-map=arena",
	}
	if tune != nil {
		tune(h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- run(ctx, h.cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Error("run did not return after cancel")
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("server logs:\n%s", h.logs)
		}
	})
	return h
}

// registration waits for the first registration.
func (h *harness) registration() registration {
	h.t.Helper()
	var reg registration
	testkit.WaitFor(h.t, 10*time.Second, "a registration", func() bool {
		regs, _, _ := h.registry.snapshot()
		if len(regs) > 0 {
			reg = regs[0]
		}
		return len(regs) > 0
	})
	return reg
}

// callback posts body as the allocator would, with the given token.
func (h *harness) callback(reg registration, token string, body any) (int, map[string]string) {
	h.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+reg.Callback.URL, bytes.NewReader(raw))
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// callbackEndpointCloses waits until the callback port refuses
// connections, as GameFabric requires once a server is allocated.
func (h *harness) callbackEndpointCloses(reg registration) {
	h.t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(reg.Ports["alloc"])
	testkit.WaitFor(h.t, 5*time.Second, "the callback endpoint to close", func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true
		}
		conn.Close()
		return false
	})
}

func (h *harness) wait() error {
	h.t.Helper()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		h.t.Fatal("run did not return")
		return nil
	}
}

// noSecretsLogged checks the credentials never reached the logs.
func (h *harness) noSecretsLogged(reg registration) {
	h.t.Helper()
	logs := h.logs.String()
	for _, secret := range []string{partnerToken, "pst-secret-e0a1", h.registry.token, reg.Callback.Token} {
		if strings.Contains(logs, secret) {
			h.t.Errorf("a secret (%.6s…) appears in the logs", secret)
		}
	}
}
