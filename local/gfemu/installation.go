package gfemu

import (
	"net/http/httptest"
	"strings"
)

// Installation is one Allocator and the Ping Service that discovers
// through it, each on a loopback port of its own: GameFabric as the tests
// and the benchmark script it. make dev runs several Allocators on fixed
// ports instead (local/stack).
type Installation struct {
	*Emulator
	Ping    *PingService
	URL     string // the Allocator's base URL (GAMEFABRIC_URL)
	PingURL string // the Ping Service's full URL (GAMEFABRIC_PING_URL)

	allocator, ping *httptest.Server
}

// Start serves an Installation whose Allocator accepts tokens (any of
// them: a rotation) and whose Ping Service, until its SetTokens, does too,
// as in a single-token installation. Nobody can register, so every answer
// is scripted or "no game server".
func Start(tokens ...string) *Installation {
	e := New(Config{Prefix: "/allocator/test", AllocatorTokens: tokens})
	p := NewPingService(PingConfig{Tokens: tokens, Sources: []PingSource{{Allocator: e}}})
	i := &Installation{Emulator: e, Ping: p, allocator: httptest.NewServer(e.Handler()), ping: httptest.NewServer(p.Handler())}
	i.URL, i.PingURL = i.allocator.URL, i.ping.URL+p.Path()
	return i
}

// AllocatePath is the Allocation endpoint's path without its leading
// slash (GAMEFABRIC_ALLOCATE_PATH).
func (i *Installation) AllocatePath() string {
	return strings.TrimPrefix(i.Prefix(), "/") + "/allocate"
}

// AllocateURL is the Allocation endpoint.
func (i *Installation) AllocateURL() string { return i.URL + "/" + i.AllocatePath() }

// Close stops both listeners.
func (i *Installation) Close() {
	i.ping.Close()
	i.allocator.Close()
}
