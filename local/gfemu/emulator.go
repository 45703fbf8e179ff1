package gfemu

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Config configures one emulated Allocator. The zero value works except
// that, without tokens, every request is refused.
type Config struct {
	Prefix          string           // path prefix of this allocator instance, default "/allocator/local"
	AllocatorTokens []string         // valid bearer tokens for allocate; any is accepted (rotation)
	RegistryTokens  []string         // valid bearer tokens for the registry (game servers' ALLOC_TOKEN)
	QPS             float64          // allocate rate limit (token bucket); <= 0 = unlimited
	Burst           int              // bucket size; default max(1, ceil(QPS))
	CallbackTimeout time.Duration    // default 2s
	CallbackBearer  bool             // send the callback token as "Bearer <token>" instead of verbatim
	Now             func() time.Time // default time.Now (tests inject)
}

// DefaultPrefix is the path prefix used when Config.Prefix is empty.
const DefaultPrefix = "/allocator/local"

// Emulator is one in-memory GameFabric Allocator: its Registry and its
// Allocation endpoint, with answers a test may script per region (script.go)
// and a log of every allocate call. Create it with New.
type Emulator struct {
	prefix                 string
	allocTokens, regTokens *tokens // SetTokens rotates allocTokens
	cbBearer               bool
	now                    func() time.Time
	client                 *http.Client  // for callbacks
	limiter                *rate.Limiter // nil = unlimited; asked with the injected clock
	mux                    *http.ServeMux

	mu       sync.Mutex
	servers  map[string]*entry    // by address
	seq      uint64               // registration counter, orders ties
	drained  map[string]time.Time // region string → when it refills (drain.go)
	script   map[string][]Answer  // region string → one-shot answers
	sticky   map[string]Answer    // region string → the answer once its script is used up
	nextPort int                  // of the next scripted allocation
	calls    []Call
}

// New builds an emulator. It panics when Prefix cannot be part of a route
// pattern, since that is a programming error in the caller's setup.
func New(cfg Config) *Emulator {
	e := &Emulator{
		prefix:      normalizePrefix(cfg.Prefix),
		allocTokens: newTokens(cfg.AllocatorTokens...),
		regTokens:   newTokens(cfg.RegistryTokens...),
		cbBearer:    cfg.CallbackBearer,
		now:         cfg.Now,
		client:      newCallbackClient(cfg.CallbackTimeout),
		servers:     make(map[string]*entry),
		drained:     make(map[string]time.Time),
		script:      make(map[string][]Answer),
		sticky:      make(map[string]Answer),
		nextPort:    7000,
	}
	if e.now == nil {
		e.now = time.Now
	}
	if cfg.QPS > 0 {
		burst := cfg.Burst
		if burst <= 0 {
			burst = max(1, int(math.Ceil(cfg.QPS)))
		}
		e.limiter = rate.NewLimiter(rate.Limit(cfg.QPS), burst)
	}
	if strings.ContainsAny(e.prefix, "{} \t\n") {
		panic("gfemu: Prefix " + e.prefix + " cannot be used in a route pattern")
	}
	e.mux = http.NewServeMux()
	e.mux.HandleFunc("POST "+e.prefix+"/servers", e.handleRegister)
	e.mux.HandleFunc("POST "+e.prefix+"/servers/{addr}/keepalive", e.handleKeepAlive)
	e.mux.HandleFunc("DELETE "+e.prefix+"/servers/{addr}", e.handleDeregister)
	e.mux.HandleFunc("POST "+e.prefix+"/allocate", e.handleAllocate)
	return e
}

// Prefix returns the normalized path prefix the routes live under.
func (e *Emulator) Prefix() string { return e.prefix }

// Handler serves the emulator's routes.
func (e *Emulator) Handler() http.Handler { return jsonErrors(e.mux) }

// Servers returns a snapshot of the registered (unallocated, unexpired)
// servers, sorted by region, then priority, then address.
func (e *Emulator) Servers() []Server {
	e.mu.Lock()
	all := e.snapshotLocked()
	e.mu.Unlock()
	slices.SortFunc(all, func(a, b Server) int {
		return cmp.Or(cmp.Compare(a.Region, b.Region), cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Address, b.Address))
	})
	return all
}

// SetTokens replaces the allocator tokens (a rotation).
func (e *Emulator) SetTokens(list ...string) { e.allocTokens.set(list...) }

// Calls returns the allocate calls received, in the order they arrived.
func (e *Emulator) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// Allocations returns the calls answered 200 in full (a scripted raw body
// included), in the order they arrived.
func (e *Emulator) Allocations() []Call {
	return slices.DeleteFunc(e.Calls(), func(c Call) bool { return c.Answered != http.StatusOK })
}

// normalizePrefix makes "{prefix}/servers" a clean path whatever slashes the
// caller wrote; "/" puts the routes at the root.
func normalizePrefix(p string) string {
	if p = strings.Trim(cmp.Or(p, DefaultPrefix), "/"); p == "" {
		return ""
	}
	return "/" + p
}
