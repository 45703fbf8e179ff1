package gfemu

import (
	"cmp"
	"net"
	"net/http"
	"slices"
	"strconv"
)

// pingTarget mirrors shared/gamefabric.PingTarget; the emulator keeps its
// own copy so it stays a stand-in for GameFabric, not a client of ours.
type pingTarget struct {
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}

type pingResponse struct {
	Regions map[string][]pingTarget `json:"regions"`
}

func (e *Emulator) handlePing(w http.ResponseWriter, r *http.Request) {
	if !authorized(w, r, e.pingTokens, "ping") {
		return
	}
	e.mu.Lock()
	servers := e.snapshotLocked()
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, pingResponse{Regions: pingTargets(servers)})
}

// pingTargets lists one udp target per distinct ip:port per region, sorted,
// so the answer is stable for tests and caches.
func pingTargets(servers []Server) map[string][]pingTarget {
	regions := map[string][]pingTarget{}
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
		t := pingTarget{Address: ip, Port: port, Protocol: "udp"}
		if !slices.Contains(regions[s.Region], t) {
			regions[s.Region] = append(regions[s.Region], t)
		}
	}
	for _, targets := range regions {
		slices.SortFunc(targets, func(a, b pingTarget) int {
			return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
		})
	}
	return regions
}
