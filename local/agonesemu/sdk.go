package agonesemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/agones"
)

// SDK is one game server's Agones SDK server (the sidecar of its pod), on
// a loopback port of its own, over the GameServer it creates.
type SDK struct {
	URL  string // http://127.0.0.1:<port>, the game server's AGONES_SDK_HTTP_PORT
	Port int
	Name string // its GameServer's
	a    *Allocator
	srv  *http.Server
}

// StartSDK creates a GameServer from gs, Scheduled as a new pod's is until
// its game server calls Ready, and serves its SDK.
func (a *Allocator) StartSDK(gs GameServer) (*SDK, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("agones sdk: %w", err)
	}
	gs.State = StateScheduled
	s := &SDK{URL: "http://" + ln.Addr().String(), Port: ln.Addr().(*net.TCPAddr).Port, Name: a.Add(gs), a: a}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /gameserver", s.gameServer)
	mux.HandleFunc("POST /ready", s.state(StateReady))
	mux.HandleFunc("POST /shutdown", s.state(StateShutdown))
	mux.HandleFunc("POST /health", s.state(""))
	mux.HandleFunc("PATCH /v1beta1/counters/{name}", s.updateCounter)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the SDK server and deletes its GameServer: the pod is gone.
func (s *SDK) Close() error {
	s.a.mu.Lock()
	delete(s.a.servers, s.Name)
	s.a.mu.Unlock()
	return s.srv.Close()
}

// with runs f on the GameServer under the lock; false when it is gone.
func (s *SDK) with(w http.ResponseWriter, f func(gs *GameServer)) bool {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	gs := s.a.servers[s.Name]
	if gs == nil {
		writeStatus(w, http.StatusInternalServerError, "gameserver "+s.Name+" not found")
		return false
	}
	f(gs)
	return true
}

// state moves the GameServer to state ("" leaves it: a health ping).
// Shutdown is final, as Agones deletes the GameServer then.
func (s *SDK) state(state string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.with(w, func(gs *GameServer) {
			if state != "" && gs.State != StateShutdown {
				gs.State = state
			}
		}) {
			writeJSON(w, http.StatusOK, struct{}{})
		}
	}
}

// gameServer is sdk.proto's GameServer as the SDK server's gateway writes
// it: proto names, 64-bit integers as strings, int32 ports as numbers.
func (s *SDK) gameServer(w http.ResponseWriter, _ *http.Request) {
	var out map[string]any
	if s.with(w, func(gs *GameServer) {
		counters := map[string]any{}
		for name, c := range gs.Counters {
			counters[name] = map[string]agones.Int64{"count": agones.Int64(c.Count), "capacity": agones.Int64(c.Capacity)}
		}
		out = map[string]any{
			"object_meta": map[string]any{"name": gs.Name, "namespace": gs.Namespace, "generation": agones.Int64(1),
				"annotations": cloneOr(gs.Annotations), "labels": cloneOr(gs.Labels)},
			"status": map[string]any{"state": gs.State, "address": gs.Address, "ports": portsOf(gs), "counters": counters,
				"addresses": []agones.Address{{Type: agones.AddressExternalIP, Address: gs.Address}}}}
	}) {
		writeJSON(w, http.StatusOK, out)
	}
}

// updateCounter is beta.proto's UpdateCounter: a capacity or count set,
// or countDiff, refused when the count would leave 0..capacity.
func (s *SDK) updateCounter(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name            string
		Count, Capacity *agones.Int64
		CountDiff       agones.Int64 `json:"countDiff"`
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeStatus(w, http.StatusBadRequest, "invalid CounterUpdateRequest: "+err.Error())
		return
	}
	name := r.PathValue("name")
	var problem string
	var now agones.Count
	if !s.with(w, func(gs *GameServer) {
		c, ok := gs.Counters[name]
		if !ok {
			problem = "counter not found: " + name
			return
		}
		if req.Capacity != nil {
			c.Capacity = int64(*req.Capacity)
		}
		if req.Count != nil {
			c.Count = int64(*req.Count)
		}
		c.Count += int64(req.CountDiff)
		if c.Capacity < 0 || c.Count < 0 || c.Count > c.Capacity {
			problem = fmt.Sprintf("out of range. Count must be within range [0,Capacity]. Found Count: %d, Capacity: %d", c.Count, c.Capacity)
			return
		}
		gs.Counters[name], now = c, c
	}) {
		return
	}
	if problem != "" {
		writeStatus(w, http.StatusInternalServerError, problem) // errors.Errorf: gRPC Unknown
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "count": agones.Int64(now.Count), "capacity": agones.Int64(now.Capacity)})
}
