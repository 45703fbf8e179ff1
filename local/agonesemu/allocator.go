// Package agonesemu is the one Agones of the local stack and the tests: an
// in-memory stand-in for Agones' allocator service and for the Agones SDK
// server (the sidecar beside each game server), sharing one set of
// GameServers. It follows Agones' public sources (googleforgames/agones:
// proto/allocation/allocation.proto, cmd/allocator/main.go,
// pkg/gameserverallocations/find.go, proto/sdk/sdk.proto and beta.proto).
// The wire types are the client's own (shared/agones).
//
// The allocator service (Start) serves POST /gameserverallocation over
// HTTPS on loopback with mutual TLS as cmd/allocator does: its certificate
// from a CA made per run (CA, Secret), any client certificate required and
// then verified against that CA for client authentication. It picks a
// GameServer as Agones does for what our adapter sends: the selectors in
// order (labels, state, counters' minAvailable), Packed (Allocated first,
// then the priorities, then the name) or Distributed (the priorities, else
// at random); applies the metadata patch and the counter actions (capacity,
// then the count, kept within 0..capacity); and answers the
// AllocationResponse. With no GameServer it answers the installation's
// unallocated status (Config.UnallocatedStatus, 429) with grpc-gateway's
// error body. A test scripts answers (Queue, Always: statuses, delays, raw
// bodies, an answer lost after allocating) and reads the calls (Calls).
//
// The SDK server (StartSDK) is one game server's: GET /gameserver, POST
// /ready, /health, /shutdown and PATCH /v1beta1/counters/{name}, on a
// loopback port of its own, as the sidecar is per pod.
//
// Where Agones is not public or the stand-in chooses: request members
// shared/agones does not send are refused (400, InvalidArgument), so the
// client cannot drift from what the stand-in checks; there is one node.
package agonesemu

import (
	"cmp"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/agones"
)

// Agones' GameServer states (GameServer.State).
const (
	StateScheduled = "Scheduled"
	StateReady     = "Ready"
	StateAllocated = "Allocated"
	StateShutdown  = "Shutdown"
)

// Config configures an allocator service.
type Config struct {
	Port int // on 127.0.0.1; 0 any free port
	// UnallocatedStatus is httpUnallocatedStatusCode, default 429.
	UnallocatedStatus int
	// NoClientAuth asks for no client certificate (mTLS off): a fault.
	NoClientAuth bool
	// CertExpired serves a server certificate that expired: a fault.
	CertExpired bool
}

// GameServer is one Agones GameServer.
type GameServer struct {
	Name, Namespace, NodeName string
	State                     string
	Labels, Annotations       map[string]string
	Address                   string
	Ports                     []agones.Port
	Counters                  map[string]agones.Count
}

// Call is one allocation request the service received.
type Call struct {
	Request agones.AllocationRequest
	// GameServer is the GameServer it allocated, even when the answer
	// was then lost; "" for none.
	GameServer string
	// Answered is the status of the answer sent in full; 0 when none was.
	Answered int
	At       time.Time
}

// Allocator is a running allocator service and its GameServers.
type Allocator struct {
	CA  *CA
	URL string // https://127.0.0.1:<port>
	cfg Config
	srv *http.Server

	mu      sync.Mutex
	servers map[string]*GameServer
	seq     int
	script  []Answer
	sticky  *Answer
	calls   []Call
}

// Start serves an allocator service with a CA of its own.
func Start(cfg Config) (*Allocator, error) {
	cfg.UnallocatedStatus = cmp.Or(cfg.UnallocatedStatus, http.StatusTooManyRequests)
	ca, err := NewCA("agonesemu allocator-tls-ca")
	if err != nil {
		return nil, err
	}
	notAfter := time.Now().Add(24 * time.Hour)
	if cfg.CertExpired {
		notAfter = time.Now().Add(-time.Minute)
	}
	tlsCfg, err := ca.serverTLS(notAfter, cfg.NoClientAuth)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)))
	if err != nil {
		return nil, fmt.Errorf("agones allocator: %w", err)
	}
	a := &Allocator{CA: ca, URL: "https://" + ln.Addr().String(), cfg: cfg, servers: map[string]*GameServer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /gameserverallocation", a.handleAllocate)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeStatus(w, http.StatusNotFound, "Not Found") })
	// The handshake's failures are the client's to see, not our log's.
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: discardLog}
	go func() { _ = a.srv.Serve(tls.NewListener(ln, tlsCfg)) }()
	return a, nil
}

// Close stops the service.
func (a *Allocator) Close() error { return a.srv.Close() }

// Secret is a valid client's secret: a client certificate of a.CA for a
// day, trusting a.CA.
func (a *Allocator) Secret() string {
	s, err := a.CA.ClientSecret(a.CA, time.Now().Add(24*time.Hour))
	if err != nil {
		panic("agonesemu: " + err.Error()) // crypto/rand failing: nothing to recover
	}
	return s
}

// Add adds gs (Ready, in namespace "default" on node "node-1" at
// 127.0.0.1 unless it says otherwise) and returns its name.
func (a *Allocator) Add(gs GameServer) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	gs.Name = cmp.Or(gs.Name, fmt.Sprintf("gameserver-%04d", a.seq))
	gs.Namespace, gs.NodeName = cmp.Or(gs.Namespace, "default"), cmp.Or(gs.NodeName, "node-1")
	gs.State, gs.Address = cmp.Or(gs.State, StateReady), cmp.Or(gs.Address, "127.0.0.1")
	gs.Labels, gs.Annotations, gs.Counters = cloneOr(gs.Labels), cloneOr(gs.Annotations), cloneOr(gs.Counters)
	gs.Ports = slices.Clone(gs.Ports)
	a.servers[gs.Name] = &gs
	return gs.Name
}

// GameServers is a snapshot of every GameServer, by name.
func (a *Allocator) GameServers() []GameServer {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]GameServer, 0, len(a.servers))
	for _, name := range slices.Sorted(maps.Keys(a.servers)) {
		out = append(out, a.servers[name].clone())
	}
	return out
}

// Calls are the allocation requests received, in order.
func (a *Allocator) Calls() []Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// Allocations are the calls that allocated a GameServer, answered or not.
func (a *Allocator) Allocations() []Call {
	return slices.DeleteFunc(a.Calls(), func(c Call) bool { return c.GameServer == "" })
}

func (gs *GameServer) clone() GameServer {
	c := *gs
	c.Labels, c.Annotations, c.Counters, c.Ports = maps.Clone(gs.Labels), maps.Clone(gs.Annotations), maps.Clone(gs.Counters), slices.Clone(gs.Ports)
	return c
}

func cloneOr[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return M{}
	}
	return maps.Clone(m)
}

// grpcCodes are grpc-gateway's HTTP statuses' gRPC codes, for the error
// body's "code".
var grpcCodes = map[int]int{400: 3, 401: 16, 403: 7, 404: 5, 409: 10, 429: 8, 500: 13, 501: 12, 503: 14, 504: 4}

// writeStatus answers status with grpc-gateway's error body.
func writeStatus(w http.ResponseWriter, status int, msg string) {
	code := cmp.Or(grpcCodes[status], 2) // else Unknown
	writeJSON(w, status, map[string]any{"code": code, "message": msg, "details": []any{}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
