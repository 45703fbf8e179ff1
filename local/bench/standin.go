package bench

import (
	"context"
	"net/http"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

// The regions the stand-in is scripted for, chosen so that one stack
// serves every figure: FALLBACK_REGION is RegionFallback, so a request for
// RegionDown falls back to it.
const (
	RegionOK       = "us-west"      // 200 after the fixed delay
	RegionFallback = "eu-central-1" // 200 after the same delay
	RegionDown     = "us-east"      // 503 at once
)

// Version is the gameServerVersion every request carries.
const (
	benchEnvironment = "prag"
	benchArmadaSet   = "sample-game-armada-set"
	Version          = benchEnvironment + "::" + benchArmadaSet
	standInToken     = "bench-allocator-token"
)

// StandIn is GameFabric's allocator played by local/gfemu, which follows
// the documented protocol, with a fixed delay per successful answer.
type StandIn struct {
	*gfemu.Installation
	Delay  time.Duration
	client *gamefabric.Client
}

// StartStandIn serves the stand-in on loopback.
func StartStandIn(delay time.Duration) *StandIn {
	srv := gfemu.Start(standInToken)
	srv.Always(RegionOK, gfemu.Answer{Delay: delay})
	srv.Always(RegionFallback, gfemu.Answer{Delay: delay})
	srv.Always(RegionDown, gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "no capacity (bench: primary down)"})
	// Live ping targets for every region, so the scheduled ping refresh
	// keeps them Deployed instead of marking them Unhealthy.
	targets := map[string][]gamefabric.PingTarget{}
	for _, r := range []string{RegionOK, RegionFallback, RegionDown} {
		targets[r] = []gamefabric.PingTarget{{Address: "127.0.0.1", Port: 7600, Protocol: "udp"}}
	}
	srv.Ping.SetRegions(targets)
	// The function's own client, so the direct reference pays the same
	// encoding, HTTP and decoding work.
	return &StandIn{Installation: srv, Delay: delay, client: gamefabric.NewClient(&http.Client{}, srv.AllocateURL())}
}

// Direct makes one allocate call straight to the stand-in with the body
// shape the function sends, and returns its round-trip time. A non-2xx
// answer is a *gamefabric.Error.
func (s *StandIn) Direct(ctx context.Context, region, gameInstanceID string) (time.Duration, error) {
	req := gamefabric.AllocateRequest{
		Region:     region,
		Attributes: map[string]string{"env": benchEnvironment, "armadaset": benchArmadaSet},
		Payload: allocation.Payload{GameInstanceID: gameInstanceID, PartnerGameToken: "bench-partner-token-0123456789abcdef0123456789abcdef",
			PragmaBackendAddress: "http://127.0.0.1:3000", ServerArgs: "-map=arena"},
	}
	start := time.Now()
	_, err := s.client.Allocate(ctx, standInToken, req)
	return time.Since(start), err
}

// UpstreamAllocations maps each game instance to the servers the stand-in
// handed out for it (answered 200 in full).
func (s *StandIn) UpstreamAllocations() map[string][]string {
	out := map[string][]string{}
	for _, c := range s.Allocations() {
		if id, ok := c.Payload["GameInstanceId"].(string); ok {
			out[id] = append(out[id], c.Server)
		}
	}
	return out
}
