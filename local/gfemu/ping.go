package gfemu

import (
	"cmp"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

// DefaultPingPath is where the Ping Service answers when PingConfig.Path
// is empty.
const DefaultPingPath = "/ping"

// PingSource is one Allocator the Ping Service discovers game servers
// through ("The Ping Service discovers game servers through the Allocator").
type PingSource struct {
	Allocator *Emulator
	// Regions maps the Allocator's region string (what its servers register
	// as ALLOC_REGION) to the GameFabric Region name reported for it. A
	// string not listed is reported as it is, which is right for regions
	// whose Allocator region string is the Region's name.
	Regions map[string]string
}

// PingConfig configures the emulated Ping Service.
type PingConfig struct {
	Path    string   // default DefaultPingPath
	Tokens  []string // its own bearer tokens (rotation: any listed one); empty admits nobody
	Sources []PingSource
}

// PingService is GameFabric's managed Ping Service: its own URL and its own
// tokens, listing per Region the game servers registered with the
// Allocators it discovers through, unless a test scripts its answer
// (SetRegions, Script). Create it with NewPingService.
type PingService struct {
	path    string
	sources []PingSource
	handler http.Handler
	tokens  *tokens

	mu      sync.Mutex
	regions map[string][]gamefabric.PingTarget // scripted; nil = discovered
	script  Answer                             // the zero Answer answers as usual
	calls   int
}

// NewPingService builds the Ping Service. It panics when Path cannot be a
// route pattern, a programming error in the caller's setup.
func NewPingService(cfg PingConfig) *PingService {
	p := &PingService{path: cfg.Path, tokens: newTokens(cfg.Tokens...), sources: slices.Clone(cfg.Sources)}
	if p.path == "" {
		p.path = DefaultPingPath
	}
	if !strings.HasPrefix(p.path, "/") || strings.ContainsAny(p.path, "{} \t\n") {
		panic("gfemu: ping Path " + p.path + " cannot be used as a route pattern")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+p.path, p.handlePing)
	p.handler = jsonErrors(mux)
	return p
}

// Path returns the path the service answers on.
func (p *PingService) Path() string { return p.path }

// Handler serves the Ping Service.
func (p *PingService) Handler() http.Handler { return p.handler }

// SetTokens replaces the service's valid tokens (a rotation).
func (p *PingService) SetTokens(list ...string) { p.tokens.set(list...) }

// SetRegions makes the service answer regions instead of what it
// discovers (nil discovers again), and ends any Script.
func (p *PingService) SetRegions(regions map[string][]gamefabric.PingTarget) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.regions, p.script = regions, Answer{}
}

// Script makes the service answer a until SetRegions is called: a failure,
// or with a RawBody an answer in a shape other than ours.
func (p *PingService) Script(a Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.script = a
}

// Calls counts authorised ping-discovery calls.
func (p *PingService) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

func (p *PingService) handlePing(w http.ResponseWriter, r *http.Request) {
	if _, ok := authorize(w, r, p.tokens, "ping"); !ok {
		return
	}
	p.mu.Lock()
	p.calls++
	a, regions := p.script, p.regions
	p.mu.Unlock()
	if !a.wait(r) {
		return
	}
	body := a.body()
	if body == nil {
		if regions == nil {
			regions = p.discover()
		}
		body, _ = json.Marshal(map[string]any{"regions": regions})
		body = append(body, '\n')
	}
	a.send(w, r, body, nil)
}

// discover lists, per GameFabric Region name, one udp target per distinct
// ip:port of every source's servers, sorted so the answer is stable for
// tests and caches. Servers without a region string are not listed.
func (p *PingService) discover() map[string][]gamefabric.PingTarget {
	regions := map[string][]gamefabric.PingTarget{}
	for _, src := range p.sources {
		for _, s := range src.Allocator.Servers() {
			if s.Region == "" {
				continue
			}
			ip, portStr, _ := net.SplitHostPort(s.Address) // validated at registration
			port, _ := strconv.Atoi(portStr)
			if p, ok := s.Ports["ping"]; ok {
				port = p
			} else if p, ok := s.Ports["game"]; ok {
				port = p
			}
			name := cmp.Or(src.Regions[s.Region], s.Region)
			if t := (gamefabric.PingTarget{Address: ip, Port: port, Protocol: "udp"}); !slices.Contains(regions[name], t) {
				regions[name] = append(regions[name], t)
			}
		}
	}
	for _, targets := range regions {
		slices.SortFunc(targets, func(a, b gamefabric.PingTarget) int {
			return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
		})
	}
	return regions
}
