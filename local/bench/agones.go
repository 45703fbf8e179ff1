package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/shared/agones"
)

// RegionAgones is the bench stack's Agones region: the stack's Agones
// stand-in (whole servers), answering after the GameFabric stand-in's delay.
const RegionAgones = "eu-agones"

// agonesFleet are the labels the stack's Agones entry selects for Version.
var agonesFleet = map[string]string{"agones.dev/fleet": benchArmadaSet, "env": benchEnvironment}

// MeasureAgonesOverhead is MeasureOverhead for the Agones path: fresh
// allocations through the stack to the Agones stand-in over mutual TLS,
// alternating with direct mTLS calls to it through shared/agones' client
// with the adapter's body shape (selectors, the payload as annotations).
func MeasureAgonesOverhead(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer) (OverheadResult, error) {
	g := s.Agones
	if g == nil {
		return OverheadResult{}, fmt.Errorf("agones overhead: the stack has no Agones region")
	}
	for i := range 2 * (o.Warmup + o.N) { // each call takes a GameServer
		g.Allocator.Add(agonesemu.GameServer{Labels: agonesFleet, Ports: []agones.Port{{Name: "game", Port: agones.Int64(20000 + i%40000)}}})
	}
	id, err := agones.ParseIdentity(g.Allocator.Secret())
	if err != nil {
		return OverheadResult{}, err
	}
	client := agones.NewClient(g.Allocator.URL)
	return measureOverhead(ctx, s, o, log, "agones overhead", RegionAgones, func(ctx context.Context, gameInstanceID string) (time.Duration, error) {
		const p = "agones.dev/sdk-payload-"
		req := agones.AllocationRequest{Namespace: "default", Scheduling: agones.SchedulingPacked,
			GameServerSelectors: []agones.GameServerSelector{{MatchLabels: agonesFleet, GameServerState: agones.StateReady}},
			Metadata: &agones.MetaPatch{Annotations: map[string]string{p + "GameInstanceId": gameInstanceID, p + "ServerArgs": "-map=arena",
				p + "PartnerGameToken": "bench-partner-token-0123456789abcdef0123456789abcdef", p + "PartnerSocialToken": "",
				p + "pragmaBackendAddress": "http://127.0.0.1:3000", p + "last-applied": gameInstanceID}}}
		start := time.Now()
		_, err := client.Allocate(ctx, id, req)
		return time.Since(start), err
	})
}
