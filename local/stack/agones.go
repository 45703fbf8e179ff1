package stack

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/local/internal/proc"
	"github.com/gamefabric-alloc/allocsvc/shared/agones"
)

// AgonesConfig is a studio's own Agones cluster (local/agonesemu) serving
// one Region through its allocator service, over mutual TLS with a CA made
// per run. Its game servers are fleet.regions.<Region>'s processes, each
// a GameServer of its own with its own SDK server, in a Fleet named after
// FallbackArmadaSet and labelled env: FallbackEnvironment, which the
// entry's matchLabels select ({"agones.dev/fleet": "{armadaset}", "env":
// "{env}"}).
type AgonesConfig struct {
	Region string `yaml:"region"` // "" runs no Agones cluster
	Port   int    `yaml:"port"`   // the allocator service's, on 127.0.0.1
	// RoomsCounter is the Fleet's Counter of rooms (the entry's
	// roomsCounter): its capacity is a process's rooms, 1 for a dedicated
	// one; "" allocates whole servers.
	RoomsCounter string `yaml:"roomsCounter"`
}

// Agones is the running cluster.
type Agones struct {
	AgonesConfig
	Allocator *agonesemu.Allocator
	SecretARN string // the client's {"tls.crt", "tls.key", "ca.crt"} in Secrets Manager
	labels    map[string]string

	mu   sync.Mutex
	sdks map[int]*agonesemu.SDK // by fleet slot: the pod of its current process
}

// agonesMatchLabels select the Fleet's GameServers for the request's
// gameServerVersion (as in the and docs/agones.md's example).
var agonesMatchLabels = map[string]string{"agones.dev/fleet": "{armadaset}", "env": "{env}"}

// startAgones serves the cluster's allocator service and stores its
// client secret, when cfg has an Agones region.
func (c *Components) startAgones(ctx context.Context, cfg Config, sm *secretsmanager.Client) error {
	ac := cfg.Agones
	if ac.Region == "" {
		return nil
	}
	a, err := agonesemu.Start(agonesemu.Config{Port: ac.Port})
	if err != nil {
		return err
	}
	g := &Agones{AgonesConfig: ac, Allocator: a, sdks: map[int]*agonesemu.SDK{},
		labels: map[string]string{"agones.dev/fleet": cfg.Parameters["FallbackArmadaSet"], "env": cfg.Parameters["FallbackEnvironment"]}}
	c.closers = append(c.closers, g.close)
	out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("agones/" + ac.Region + "/allocator-client"),
		SecretString: aws.String(a.Secret())})
	if err != nil {
		return fmt.Errorf("create the Agones client secret: %w", err)
	}
	g.SecretARN, c.Agones = *out.ARN, g
	return nil
}

// entry is the Region's GAMEFABRIC_ALLOCATORS entry.
func (g *Agones) entry() map[string]any {
	e := map[string]any{"kind": "agones", "url": g.Allocator.URL, "tlsSecretId": g.SecretARN, "matchLabels": agonesMatchLabels}
	if g.RoomsCounter != "" {
		e["roomsCounter"] = g.RoomsCounter
	}
	return e
}

// slotEnv is the pod of the fleet slot's next process: a new GameServer
// (the last process's is deleted with its SDK server) on a free game port,
// and the environment that points the process at both.
func (g *Agones) slotEnv(slot, rooms int) []string {
	port, err := proc.FreePort()
	if err != nil {
		return nil // the process cannot reach an SDK server, fails, and is relaunched
	}
	gs := agonesemu.GameServer{Labels: g.labels, Ports: []agones.Port{{Name: "game", Port: agones.Int64(port)}}}
	if g.RoomsCounter != "" {
		gs.Counters = map[string]agones.Count{g.RoomsCounter: {Capacity: int64(max(rooms, 1))}}
	}
	sdk, err := g.Allocator.StartSDK(gs)
	if err != nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if old := g.sdks[slot]; old != nil {
		_ = old.Close()
	}
	g.sdks[slot] = sdk
	return []string{"AGONES_SDK_HTTP_PORT=" + strconv.Itoa(sdk.Port), "GAME_PORT=" + strconv.Itoa(port)}
}

func (g *Agones) close() error {
	g.mu.Lock()
	for _, sdk := range g.sdks {
		_ = sdk.Close()
	}
	g.mu.Unlock()
	return g.Allocator.Close()
}

// Ready are the GameServers waiting to be allocated.
func (g *Agones) Ready() []agonesemu.GameServer {
	var out []agonesemu.GameServer
	for _, gs := range g.Allocator.GameServers() {
		if gs.State == agonesemu.StateReady {
			out = append(out, gs)
		}
	}
	return out
}
