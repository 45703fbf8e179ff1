// Package stack runs the whole product on one machine without Docker:
// DynamoDB Local and moto, emulated GameFabric Allocators and a Ping
// Service, every function's real bootstrap behind a local HTTP API at the
// template's routes and on the template's schedules, and a fleet of sample
// game servers.
package stack

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
	regionname "github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Config is local/dev.yaml, which documents every key.
type Config struct {
	API struct {
		Port        int           `yaml:"port"`
		Concurrency int           `yaml:"concurrency"`
		Timeout     time.Duration `yaml:"timeout"`
	} `yaml:"api"`
	// FunctionURLs.Port is the first function URL's, the next one's the
	// next port; 0 any free port (as for every port).
	FunctionURLs struct {
		Port int `yaml:"port"`
	} `yaml:"functionUrls"`
	Dashboard struct {
		Port int `yaml:"port"`
	} `yaml:"dashboard"`
	GameFabric GameFabricConfig  `yaml:"gamefabric"`
	Agones     AgonesConfig      `yaml:"agones"`
	Parameters map[string]string `yaml:"parameters"`
	Fleet      struct {
		Stagger time.Duration             `yaml:"stagger"`
		Regions map[string][]FleetProcess `yaml:"regions"`
	} `yaml:"fleet"`
}

// GameFabricConfig is the emulated GameFabric installation.
type GameFabricConfig struct {
	CallbackTimeout time.Duration `yaml:"callbackTimeout"`
	// Allocators in order. The first also serves every Region no Allocator
	// lists, under the Region's own name, as the product does for regions
	// GAMEFABRIC_ALLOCATORS omits.
	Allocators []AllocatorConfig `yaml:"allocators"`
	Ping       PingConfig        `yaml:"ping"`
	// Drain runs Regions' Allocators dry for a while (ParseDrain).
	Drain []string `yaml:"drain"`
}

// AllocatorConfig is one emulated GameFabric Allocator. Token lists are in
// rotation order: clients use the last.
type AllocatorConfig struct {
	Name            string   `yaml:"name"` // in its URLs: /allocator/<name>/allocate and …/servers
	Port            int      `yaml:"port"`
	AllocatorTokens []string `yaml:"allocatorTokens"`
	RegistryTokens  []string `yaml:"registryTokens"`
	QPS             float64  `yaml:"qps"`   // allocate rate limit; 0 = none
	Burst           int      `yaml:"burst"` // 0 = max(1, ceil(qps))
	// CallbackAuth is CallbackAuthToken (the default) or CallbackAuthBearer.
	CallbackAuth string `yaml:"callbackAuth"`
	// Regions maps each Region attached to this Allocator (our name) to its
	// region string, which its game servers register with and allocate
	// calls send.
	Regions map[string]string `yaml:"regions"`
}

// PingConfig is the emulated Ping Service, which discovers game servers
// through every Allocator.
type PingConfig struct {
	Port   int      `yaml:"port"`
	Tokens []string `yaml:"tokens"`
}

// FleetProcess is one runtime-configuration entry.
type FleetProcess struct {
	Command              string   `yaml:"command"`
	Args                 []string `yaml:"args"`
	Env                  []string `yaml:"env"`
	ConcurrentExecutions int      `yaml:"concurrentExecutions"`
	// Rooms, 2 to gameserver.MaxRooms, makes each process host that many
	// sessions at once (the sample server's ROOMS); 0 is a dedicated server.
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

// DevGameLiftQueues is make dev's game session queue: both Regions,
// players' latencies capped at 150 ms for 10 s, a minute's wait.
const DevGameLiftQueues = `{"arena": {"regions": ["us-west", "eu-central-1"], "timeoutSeconds": 60, ` +
	`"gameServerVersion": "prag::sample-game-armada-set", ` +
	`"playerLatencyPolicies": [{"maximumIndividualPlayerLatencyMilliseconds": 150, "policyDurationSeconds": 10}]}}`

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
	c.Agones = AgonesConfig{Region: "eu-baremetal", Port: 7402, RoomsCounter: "rooms"}
	c.Parameters = map[string]string{
		"FallbackRegion": "us-west", "FallbackEnvironment": "prag", "FallbackArmadaSet": "sample-game-armada-set",
		"ZonesByRegion": "us-west=US_WEST,eu-central-1=EU_CENTRAL", "LogLevel": "info",
		// The FlexMatch front door is played locally: MatchmakingRule on the
		// default bus (make match, the dashboard's Play a match).
		"FlexMatchIntegration": "true",
		// GameLift's placement API on its own function URL, with a key
		// pair generated into GameLiftApiKeys (make gamelift-place).
		"GameLiftApi":    "true",
		"GameLiftQueues": DevGameLiftQueues,
	}
	c.Fleet.Stagger = 300 * time.Millisecond
	server := func(rooms int) []FleetProcess {
		return []FleetProcess{{Command: SampleServer, ConcurrentExecutions: 2, Rooms: rooms,
			Env: []string{"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set"}}}
	}
	// us-west's servers host 4 sessions each; eu-central-1's are dedicated;
	// eu-baremetal's Agones Fleet has one of each, its rooms counted by
	// Agones.
	c.Fleet.Regions = map[string][]FleetProcess{"us-west": server(4), "eu-central-1": server(0),
		"eu-baremetal": {{Command: SampleServer, ConcurrentExecutions: 1, Rooms: 4}, {Command: SampleServer, ConcurrentExecutions: 1}}}
	return c
}

// AnyFreePorts puts every listener on a free port, so tests and benches
// never collide with a running `make dev` or each other.
func (c *Config) AnyFreePorts() {
	c.API.Port, c.FunctionURLs.Port, c.Dashboard.Port, c.GameFabric.Ping.Port, c.Agones.Port = 0, 0, 0, 0, 0
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

// allocatorName is what can stand in a URL path segment and a secret name.
var allocatorName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// validate names every problem at once, so one edit fixes dev.yaml.
func (c Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if c.API.Concurrency < 1 {
		bad("api.concurrency must be at least 1")
	}
	ports := map[int]string{}
	port := func(p int, what string) {
		switch {
		case p < 0 || p > 65535:
			bad("%s must be 0 (any free port) to 65535, got %d", what, p)
		case p == 0:
		case ports[p] != "":
			bad("%s and %s both use port %d", ports[p], what, p)
		default:
			ports[p] = what
		}
	}
	port(c.API.Port, "api.port")
	port(c.FunctionURLs.Port, "functionUrls.port")
	port(c.Dashboard.Port, "dashboard.port")
	// The template allows two values only; another would leave the game
	// servers neither routes nor a function URL.
	if e := c.Parameters[GameServerEndpoint]; e != "" && e != GameServerFunctionURL && e != GameServerHTTPAPI {
		bad("parameters.%s must be %s or %s, got %q", GameServerEndpoint, GameServerFunctionURL, GameServerHTTPAPI, e)
	}
	servedBy := c.validateAllocators(port, bad)
	port(c.GameFabric.Ping.Port, "gamefabric.ping.port")
	tokens(c.GameFabric.Ping.Tokens, "gamefabric.ping.tokens", bad)
	// Only a Region an Allocator lists can be drained (Components.Drain).
	for i, spec := range c.GameFabric.Drain {
		if d, err := ParseDrain(spec); err != nil {
			bad("gamefabric.drain[%d]: %v", i, err)
		} else if servedBy[d.Region] == "" {
			bad("gamefabric.drain[%d]: no Allocator lists Region %s", i, d.Region)
		}
	}
	if r := c.Agones.Region; r != "" {
		port(c.Agones.Port, "agones.port")
		if !regionname.Valid(r) || servedBy[r] != "" {
			bad("agones.region %q must be %s and not a Region a GameFabric Allocator lists", r, regionname.Rule)
		}
		servedBy[r] = "agones" // its fleet's servers are the cluster's
	}
	c.validateFleet(servedBy, bad)
	return errors.Join(errs...)
}

func tokens(list []string, what string, bad func(string, ...any)) {
	if len(list) == 0 {
		bad("%s needs at least one token", what)
	}
	if slices.Contains(list, "") {
		bad("%s must not hold an empty token", what)
	}
}

// validateAllocators checks gamefabric.allocators (port registers each
// port, so that no two listeners share one) and answers which Allocator
// serves each Region.
func (c Config) validateAllocators(port func(int, string), bad func(string, ...any)) (servedBy map[string]string) {
	if len(c.GameFabric.Allocators) == 0 {
		bad("gamefabric.allocators needs at least one Allocator")
	}
	names, servedBy := map[string]bool{}, map[string]string{}
	for i, a := range c.GameFabric.Allocators {
		at := fmt.Sprintf("gamefabric.allocators[%d]", i)
		if !allocatorName.MatchString(a.Name) {
			bad("%s.name %q must be 1-31 lowercase letters, digits or dashes (it is part of URLs)", at, a.Name)
		} else if names[a.Name] {
			bad("%s.name %q is used twice", at, a.Name)
		}
		names[a.Name] = true
		port(a.Port, at+".port")
		tokens(a.AllocatorTokens, at+".allocatorTokens", bad)
		tokens(a.RegistryTokens, at+".registryTokens", bad)
		if a.QPS < 0 || a.Burst < 0 {
			bad("%s: qps and burst must be 0 or more", at)
		}
		if a.CallbackAuth != "" && a.CallbackAuth != CallbackAuthToken && a.CallbackAuth != CallbackAuthBearer {
			bad("%s.callbackAuth must be %q or %q, got %q", at, CallbackAuthToken, CallbackAuthBearer, a.CallbackAuth)
		}
		strs := map[string]string{}
		for _, region := range slices.Sorted(maps.Keys(a.Regions)) {
			s := a.Regions[region]
			// The shape GAMEFABRIC_ALLOCATORS accepts for region names
			// (callers' names are lowercased).
			if !regionname.Valid(region) {
				bad("%s.regions: Region name %q must be %s", at, region, regionname.Rule)
			}
			if other, ok := servedBy[region]; ok {
				bad("%s.regions: Region %s is already attached to Allocator %s (a Region references one Allocator)", at, region, other)
			}
			servedBy[region] = a.Name
			if s == "" || len(s) > 255 || strings.TrimSpace(s) != s || strings.IndexFunc(s, unicode.IsControl) >= 0 {
				bad("%s.regions.%s: the region string %q must be 1-255 bytes without surrounding spaces or control characters", at, region, s)
			}
			// Servers register by string alone: the Allocator and the Ping
			// Service could not tell the two Regions apart.
			if other, ok := strs[s]; ok {
				bad("%s.regions: %s and %s both map to region string %q", at, other, region, s)
			}
			strs[s] = region
		}
	}
	return servedBy
}

// validateFleet checks fleet.regions against the Allocators serving them.
func (c Config) validateFleet(servedBy map[string]string, bad func(string, ...any)) {
	for _, region := range slices.Sorted(maps.Keys(c.Fleet.Regions)) {
		for i, p := range c.Fleet.Regions[region] {
			if p.Command == "" || p.ConcurrentExecutions < 0 {
				bad("fleet.regions.%s[%d]: command is required and concurrentExecutions must be 0 or more", region, i)
			}
			if p.Rooms != 0 && (p.Rooms < 2 || p.Rooms > gameserver.MaxRooms) {
				bad("fleet.regions.%s[%d].rooms must be 0 (dedicated) or 2 to %d, got %d", region, i, gameserver.MaxRooms, p.Rooms)
			}
		}
		if len(c.GameFabric.Allocators) == 0 || servedBy[region] != "" {
			continue
		}
		// Served by the first Allocator under its own name, which must not
		// be a string that Allocator already uses for another Region.
		first := c.GameFabric.Allocators[0]
		for other, s := range first.Regions {
			if s == region {
				bad("fleet.regions.%s: no Allocator lists it, so it registers with %s as %q, which is already Region %s's string there", region, first.Name, region, other)
			}
		}
	}
}
