package stack

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
	regionname "github.com/gamefabric-alloc/allocsvc/shared/region"
)

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
	c.validateGameServerEndpoint(bad)
	port(c.Dashboard.Port, "dashboard.port")

	servedBy := c.validateAllocators(port, bad)
	port(c.GameFabric.Ping.Port, "gamefabric.ping.port")
	tokens(c.GameFabric.Ping.Tokens, "gamefabric.ping.tokens", bad)
	c.validateDrains(servedBy, bad)

	c.validateFleet(servedBy, bad)
	return errors.Join(errs...)
}

// validateDrains checks gamefabric.drain: only a Region an Allocator lists
// can be drained (Components.Drain).
func (c Config) validateDrains(servedBy map[string]string, bad func(string, ...any)) {
	for i, spec := range c.GameFabric.Drain {
		d, err := ParseDrain(spec)
		switch {
		case err != nil:
			bad("gamefabric.drain[%d]: %v", i, err)
		case servedBy[d.Region] == "":
			bad("gamefabric.drain[%d]: no Allocator lists Region %s", i, d.Region)
		}
	}
}

func tokens(list []string, what string, bad func(string, ...any)) {
	if len(list) == 0 {
		bad("%s needs at least one token", what)
	}
	if slices.Contains(list, "") {
		bad("%s must not hold an empty token", what)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validateGameServerEndpoint: the template allows two values only; another
// would leave the game servers neither routes nor a function URL.
func (c Config) validateGameServerEndpoint(bad func(string, ...any)) {
	if e := c.Parameters[GameServerEndpoint]; e != "" && e != GameServerFunctionURL && e != GameServerHTTPAPI {
		bad("parameters.%s must be %s or %s, got %q", GameServerEndpoint, GameServerFunctionURL, GameServerHTTPAPI, e)
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
		for _, region := range sortedKeys(a.Regions) {
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
	for _, region := range sortedKeys(c.Fleet.Regions) {
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
