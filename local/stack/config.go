// Package stack runs the whole product on one machine without Docker:
// DynamoDB Local and moto, the GameFabric emulator, every function's real
// bootstrap behind a local HTTP API at the template's routes and on the
// template's schedules, and a fleet of sample game servers.
package stack

import (
	"fmt"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is local/dev.yaml.
type Config struct {
	API struct {
		Port        int           `yaml:"port"`
		Concurrency int           `yaml:"concurrency"`
		Timeout     time.Duration `yaml:"timeout"`
	} `yaml:"api"`
	GameFabric struct {
		Port            int           `yaml:"port"`
		AllocatorTokens []string      `yaml:"allocatorTokens"`
		RegistryTokens  []string      `yaml:"registryTokens"`
		QPS             float64       `yaml:"qps"`
		Burst           int           `yaml:"burst"`
		CallbackTimeout time.Duration `yaml:"callbackTimeout"`
	} `yaml:"gamefabric"`
	Parameters map[string]string `yaml:"parameters"`
	Fleet      struct {
		Stagger time.Duration             `yaml:"stagger"`
		Regions map[string][]FleetProcess `yaml:"regions"`
	} `yaml:"fleet"`
}

// FleetProcess is one runtime-configuration entry.
type FleetProcess struct {
	Command              string   `yaml:"command"`
	Args                 []string `yaml:"args"`
	Env                  []string `yaml:"env"`
	ConcurrentExecutions int      `yaml:"concurrentExecutions"`
}

// SampleServer is the Command that names the built sample game server.
const SampleServer = "sampleserver"

// LoadConfig reads path (strictly: unknown keys are errors) over the defaults.
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
	return c, c.validate()
}

// Defaults is a working configuration: two regions, two servers each.
func Defaults() Config {
	var c Config
	c.API.Port, c.API.Concurrency, c.API.Timeout = 3000, 4, 30*time.Second
	c.GameFabric.Port = 7400
	c.GameFabric.AllocatorTokens = []string{"dev-allocator-token-previous", "dev-allocator-token"}
	c.GameFabric.RegistryTokens = []string{"dev-registry-token"}
	c.GameFabric.QPS, c.GameFabric.Burst, c.GameFabric.CallbackTimeout = 20, 10, 2*time.Second
	c.Parameters = map[string]string{
		"FallbackRegion": "us-west", "FallbackEnvironment": "prag", "FallbackArmadaSet": "sample-game-armada-set",
		"ZonesByRegion": "us-west=US_WEST,eu-central-1=EU_CENTRAL", "LogLevel": "info",
	}
	c.Fleet.Stagger = 300 * time.Millisecond
	server := []FleetProcess{{Command: SampleServer, ConcurrentExecutions: 2,
		Env: []string{"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set"}}}
	c.Fleet.Regions = map[string][]FleetProcess{"us-west": server, "eu-central-1": server}
	return c
}

func (c Config) validate() error {
	switch {
	case c.API.Port < 0 || c.GameFabric.Port < 0:
		return fmt.Errorf("ports must be 0 (any free port) or more")
	case c.API.Concurrency < 1:
		return fmt.Errorf("api.concurrency must be at least 1")
	case len(c.GameFabric.AllocatorTokens) == 0 || len(c.GameFabric.RegistryTokens) == 0:
		return fmt.Errorf("gamefabric.allocatorTokens and gamefabric.registryTokens need at least one token each")
	}
	for region, procs := range c.Fleet.Regions {
		for i, p := range procs {
			if p.Command == "" || p.ConcurrentExecutions < 0 {
				return fmt.Errorf("fleet.regions.%s[%d]: command is required and concurrentExecutions must be 0 or more", region, i)
			}
		}
	}
	return nil
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
