// Package stack runs the whole product on one machine without Docker:
// DynamoDB Local and moto, emulated GameFabric Allocators and a Ping
// Service, every function's real bootstrap behind a local HTTP API at the
// template's routes and on the template's schedules, and a fleet of sample
// game servers.
package stack

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is local/dev.yaml.
type Config struct {
	API struct {
		Port        int           `yaml:"port"`
		Concurrency int           `yaml:"concurrency"`
		Timeout     time.Duration `yaml:"timeout"`
	} `yaml:"api"`
	// FunctionURLs are the template's Lambda function URLs (LinkBackFunction's
	// with GameServerEndpoint FunctionUrl), each on its own loopback port.
	FunctionURLs struct {
		Port int `yaml:"port"` // the first URL's; the next one the next port; 0 = any free port
	} `yaml:"functionUrls"`
	// Dashboard is make dev's web page (local/dashboard), on 127.0.0.1.
	Dashboard struct {
		Port int `yaml:"port"` // 0 = any free port
	} `yaml:"dashboard"`
	GameFabric GameFabricConfig  `yaml:"gamefabric"`
	Parameters map[string]string `yaml:"parameters"`
	Fleet      struct {
		Stagger time.Duration             `yaml:"stagger"`
		Regions map[string][]FleetProcess `yaml:"regions"`
	} `yaml:"fleet"`
}

// GameFabricConfig is the emulated GameFabric installation: its Allocators
// and its Ping Service.
type GameFabricConfig struct {
	CallbackTimeout time.Duration `yaml:"callbackTimeout"`
	// Allocators in order. The first also serves every Region no Allocator
	// lists (GameFabricUrl, AllocatorTokenSecretArn), under the Region's
	// own name, as the product does for regions GAMEFABRIC_ALLOCATORS omits.
	Allocators []AllocatorConfig `yaml:"allocators"`
	Ping       PingConfig        `yaml:"ping"`
	// Drain runs Regions' Allocators dry for a while (ParseDrain:
	// "us-west:20s", "us-west:20s/1m"), to watch queued placements.
	Drain []string `yaml:"drain"`
}

// AllocatorConfig is one emulated GameFabric Allocator.
type AllocatorConfig struct {
	Name string `yaml:"name"` // its URLs are /allocator/<name>/allocate and …/servers
	Port int    `yaml:"port"` // 0 = any free port
	// Token lists in rotation order; clients use the last. The allocator
	// tokens are its secret in Secrets Manager, {"tokens": [...]}.
	AllocatorTokens []string `yaml:"allocatorTokens"`
	RegistryTokens  []string `yaml:"registryTokens"` // game servers get the last as ALLOC_TOKEN
	QPS             float64  `yaml:"qps"`            // allocate rate limit; 0 = none
	Burst           int      `yaml:"burst"`          // 0 = max(1, ceil(qps))
	// CallbackAuth is how the callback token travels in the Authorization
	// header: "token" (verbatim, the default) or "bearer" ("Bearer <token>").
	CallbackAuth string `yaml:"callbackAuth"`
	// Regions maps each GameFabric Region attached to this Allocator (our
	// region name) to the Allocator's region string (spec.region), which
	// its game servers register as ALLOC_REGION and allocate calls send.
	Regions map[string]string `yaml:"regions"`
}

// PingConfig is the emulated Ping Service, which discovers game servers
// through every Allocator.
type PingConfig struct {
	Port   int      `yaml:"port"`   // 0 = any free port
	Tokens []string `yaml:"tokens"` // rotation order; its secret in Secrets Manager
}

// FleetProcess is one runtime-configuration entry.
type FleetProcess struct {
	Command              string   `yaml:"command"`
	Args                 []string `yaml:"args"`
	Env                  []string `yaml:"env"`
	ConcurrentExecutions int      `yaml:"concurrentExecutions"`
	// Rooms, 2 to gameserver.MaxRooms, makes each process host that many sessions at once
	// (the sample server's ROOMS); 0 is a dedicated server.
	Rooms int `yaml:"rooms"`
}

// ProcessEnv is the entry's own environment: ROOMS from Rooms, then Env,
// which wins (a later duplicate overrides an earlier one).
func (p FleetProcess) ProcessEnv() []string {
	if p.Rooms == 0 {
		return p.Env
	}
	return append([]string{"ROOMS=" + strconv.Itoa(p.Rooms)}, p.Env...)
}

// SampleServer is the Command that names the built sample game server.
const SampleServer = "sampleserver"

// Callback authorization forms (AllocatorConfig.CallbackAuth).
const (
	CallbackAuthToken  = "token"
	CallbackAuthBearer = "bearer"
)

// LoadConfig reads path (strictly: unknown keys are errors) over the
// defaults. A list in the file (allocators, a fleet region's processes)
// replaces the default list; maps (parameters, fleet regions) are merged.
func LoadConfig(path string) (Config, error) {
	c := Defaults()
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Defaults is a working configuration: us-west and eu-central-1 behind two
// Allocators with their own tokens, region strings and rate limits, a Ping
// Service, and two game servers per region, us-west's with 4 rooms each.
func Defaults() Config {
	var c Config
	c.API.Port, c.API.Concurrency, c.API.Timeout = 3000, 4, 30*time.Second
	c.FunctionURLs.Port = 3001
	c.Dashboard.Port = 8089
	c.GameFabric.CallbackTimeout = 2 * time.Second
	c.GameFabric.Allocators = []AllocatorConfig{
		{Name: "us", Port: 7400, QPS: 20, Burst: 10, CallbackAuth: CallbackAuthToken,
			AllocatorTokens: []string{"dev-us-allocator-token-previous", "dev-us-allocator-token"},
			RegistryTokens:  []string{"dev-us-registry-token"},
			Regions:         map[string]string{"us-west": "dev-us-west"}},
		{Name: "eu", Port: 7401, QPS: 10, Burst: 5, CallbackAuth: CallbackAuthBearer,
			AllocatorTokens: []string{"dev-eu-allocator-token"},
			RegistryTokens:  []string{"dev-eu-registry-token-previous", "dev-eu-registry-token"},
			Regions:         map[string]string{"eu-central-1": "dev-eu-central-1"}},
	}
	c.GameFabric.Ping = PingConfig{Port: 7500, Tokens: []string{"dev-ping-token-previous", "dev-ping-token"}}
	c.Parameters = map[string]string{
		"FallbackRegion": "us-west", "FallbackEnvironment": "prag", "FallbackArmadaSet": "sample-game-armada-set",
		"ZonesByRegion": "us-west=US_WEST,eu-central-1=EU_CENTRAL", "LogLevel": "info",
		// The FlexMatch front door is played locally: MatchmakingRule on the
		// default bus (make match, the dashboard's Play a match).
		"FlexMatchIntegration": "true",
	}
	c.Fleet.Stagger = 300 * time.Millisecond
	server := func(rooms int) []FleetProcess {
		return []FleetProcess{{Command: SampleServer, ConcurrentExecutions: 2, Rooms: rooms,
			Env: []string{"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set"}}}
	}
	// us-west's servers host 4 sessions each; eu-central-1's are dedicated.
	c.Fleet.Regions = map[string][]FleetProcess{"us-west": server(4), "eu-central-1": server(0)}
	return c
}

// AnyFreePorts puts every listener on a free port, so tests and benches
// never collide with a running `make dev` or each other.
func (c *Config) AnyFreePorts() {
	c.API.Port, c.FunctionURLs.Port, c.Dashboard.Port, c.GameFabric.Ping.Port = 0, 0, 0, 0
	for i := range c.GameFabric.Allocators {
		c.GameFabric.Allocators[i].Port = 0
	}
}

// servers is how many game server processes the fleet keeps running.
func (c Config) servers() int {
	n := 0
	for _, procs := range c.Fleet.Regions {
		for _, p := range procs {
			n += p.ConcurrentExecutions
		}
	}
	return n
}
