package gfemu

import (
	"cmp"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/local/gfproto"
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
// Allocators it discovers through. Create it with NewPingService.
type PingService struct {
	path    string
	tokens  gfproto.Tokens
	sources []PingSource
	handler http.Handler
}

// NewPingService builds the Ping Service. It panics when Path cannot be a
// route pattern, a programming error in the caller's setup.
func NewPingService(cfg PingConfig) *PingService {
	p := &PingService{path: cfg.Path, tokens: gfproto.NewTokens(cfg.Tokens...), sources: slices.Clone(cfg.Sources)}
	if p.path == "" {
		p.path = DefaultPingPath
	}
	if !strings.HasPrefix(p.path, "/") || strings.ContainsAny(p.path, "{} \t\n") {
		panic("gfemu: ping Path " + p.path + " cannot be used as a route pattern")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+p.path, p.handlePing)
	p.handler = gfproto.JSONErrors(mux)
	return p
}

// Path returns the path the service answers on.
func (p *PingService) Path() string { return p.path }

// Handler serves the Ping Service.
func (p *PingService) Handler() http.Handler { return p.handler }

func (p *PingService) handlePing(w http.ResponseWriter, r *http.Request) {
	if !gfproto.Authorize(w, r, p.tokens, "ping") {
		return
	}
	regions := map[string][]gfproto.PingTarget{}
	for _, src := range p.sources {
		addPingTargets(regions, src.Allocator.Servers(), func(s string) string {
			if name, ok := src.Regions[s]; ok {
				return name
			}
			return s
		})
	}
	sortPingTargets(regions)
	gfproto.WriteJSON(w, http.StatusOK, gfproto.PingResponse{Regions: regions})
}

// addPingTargets adds one udp target per distinct ip:port per Region.
// Servers without a region string are not listed.
func addPingTargets(regions map[string][]gfproto.PingTarget, servers []Server, regionName func(string) string) {
	for _, s := range servers {
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
		t, name := gfproto.PingTarget{Address: ip, Port: port, Protocol: "udp"}, regionName(s.Region)
		if !slices.Contains(regions[name], t) {
			regions[name] = append(regions[name], t)
		}
	}
}

// sortPingTargets makes the answer stable for tests and caches.
func sortPingTargets(regions map[string][]gfproto.PingTarget) {
	for _, targets := range regions {
		slices.SortFunc(targets, func(a, b gfproto.PingTarget) int {
			return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
		})
	}
}
