package config

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// PingRefresh is the ping-cache refresher's configuration.
type PingRefresh struct {
	// ServiceURL is GAMEFABRIC_PING_URL: the Ping Service's own full URL.
	// When empty, the URL is GameFabricURL + PingPath.
	ServiceURL    string
	GameFabricURL string
	PingPath      string
	// TokenSecretID is PING_TOKEN_SECRET_ID: the Ping Service's tokens,
	// which are not the Allocator's (an Allocator token gets a 401).
	TokenSecretID string
	// ZonesByRegion maps GameFabric regions to backend zones; empty = all regions.
	ZonesByRegion map[string]string
	// AgonesRegions are the regions GAMEFABRIC_ALLOCATORS serves from an
	// Agones allocator: listed whether or not the Ping Service has
	// targets for them, and never Unhealthy for lacking any.
	AgonesRegions []string
	Table         string
	Period        time.Duration
	TokenCacheTTL time.Duration
	RegionHealth  RegionHealth
	LogLevel      slog.Level
}

// PingURL is where ping targets are fetched.
func (c PingRefresh) PingURL() string {
	if c.ServiceURL != "" {
		return c.ServiceURL
	}
	return strings.TrimRight(c.GameFabricURL, "/") + "/" + strings.TrimLeft(c.PingPath, "/")
}

// Regions is the regions API's configuration.
type Regions struct {
	Table        string
	Period       time.Duration
	RegionHealth RegionHealth
	LogLevel     slog.Level
}

// LoadPingRefresh reads the refresher's configuration.
func LoadPingRefresh(getenv func(string) string) (PingRefresh, error) {
	r := reader{getenv: getenv}
	c := PingRefresh{
		ServiceURL:    r.optionalURL("GAMEFABRIC_PING_URL"),
		TokenSecretID: r.required("PING_TOKEN_SECRET_ID"),
		ZonesByRegion: r.zones("ZONES_BY_REGION"),
		AgonesRegions: r.agonesRegions("GAMEFABRIC_ALLOCATORS"),
		Table:         r.required("PING_CACHE_TABLE"),
		Period:        r.schedule("PING_REFRESH_SCHEDULE"),
		TokenCacheTTL: r.duration("TOKEN_CACHE_TTL", defaults.TokenCacheTTL),
		RegionHealth:  r.regionHealth(),
		LogLevel:      r.level("LOG_LEVEL"),
	}
	// Without its own URL the Ping Service is found below GameFabric's base
	// URL, which the refresher needs only then.
	if c.ServiceURL == "" {
		if r.optional("GAMEFABRIC_URL") == "" {
			r.problem("GAMEFABRIC_PING_URL (or GAMEFABRIC_URL, below which GAMEFABRIC_PING_PATH is used) is required")
		}
		c.GameFabricURL = r.optionalURL("GAMEFABRIC_URL")
		if c.PingPath = r.optional("GAMEFABRIC_PING_PATH"); c.PingPath == "" {
			c.PingPath = defaults.PingPath
		}
	}
	if err := r.err(); err != nil {
		return PingRefresh{}, err
	}
	return c, nil
}

// LoadRegions reads the regions API's configuration.
func LoadRegions(getenv func(string) string) (Regions, error) {
	r := reader{getenv: getenv}
	c := Regions{
		Table:        r.required("PING_CACHE_TABLE"),
		Period:       r.schedule("PING_REFRESH_SCHEDULE"),
		RegionHealth: r.regionHealth(),
		LogLevel:     r.level("LOG_LEVEL"),
	}
	if err := r.err(); err != nil {
		return Regions{}, err
	}
	return c, nil
}

// ParseRate turns an EventBridge rate expression into its period. Cron
// expressions have no single period, so they are not accepted.
func ParseRate(expr string) (time.Duration, error) {
	count, unitName, ok := splitRate(strings.TrimSpace(expr))
	if !ok {
		return 0, fmt.Errorf("%q is not a rate expression such as rate(1 minute)", expr)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q must have a positive count", expr)
	}
	// EventBridge itself insists on "1 minute" but "5 minutes".
	if plural := strings.HasSuffix(unitName, "s"); plural != (n > 1) {
		return 0, fmt.Errorf("%q: EventBridge wants a singular unit for 1 and a plural one otherwise", expr)
	}
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[strings.TrimSuffix(unitName, "s")]
	return time.Duration(n) * unit, nil
}

// splitRate takes "rate(<digits> <unit>)" apart, the unit one of minute,
// minutes, hour, hours, day, days: what the pattern
// ^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$ matched. By hand
// rather than with a package-level regexp, which every function would
// compile at each cold start.
func splitRate(s string) (count, unit string, ok bool) {
	inner, ok1 := strings.CutPrefix(s, "rate(")
	inner, ok2 := strings.CutSuffix(inner, ")")
	count, unit, ok3 := strings.Cut(inner, " ")
	if !ok1 || !ok2 || !ok3 || count == "" || strings.Trim(count, "0123456789") != "" {
		return "", "", false
	}
	switch unit {
	case "minute", "minutes", "hour", "hours", "day", "days":
		return count, unit, true
	}
	return "", "", false
}

func (r *reader) schedule(name string) time.Duration {
	v := r.optional(name)
	if v == "" {
		v = defaults.PingRefreshSchedule
	}
	d, err := ParseRate(v)
	if err != nil {
		r.problem("%s: %s", name, err)
	}
	return d
}

// ParseZones reads "us-west=US_WEST,eu-central-1=EU_CENTRAL". Region names
// are lowercased like requested regions; zone names are kept as given.
func ParseZones(s string) (map[string]string, error) {
	zones := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		region, zone, ok := strings.Cut(pair, "=")
		region, zone = strings.ToLower(strings.TrimSpace(region)), strings.TrimSpace(zone)
		if !ok || region == "" || zone == "" {
			return nil, fmt.Errorf("%q is not region=ZONE", pair)
		}
		if _, dup := zones[region]; dup {
			return nil, fmt.Errorf("region %q is mapped twice", region)
		}
		zones[region] = zone
	}
	return zones, nil
}

// optionalURL is empty when name is unset, else a URL checked like url's.
func (r *reader) optionalURL(name string) string {
	if r.optional(name) == "" {
		return ""
	}
	return r.url(name)
}

func (r *reader) zones(name string) map[string]string {
	z, err := ParseZones(r.optional(name))
	if err != nil {
		r.problem("%s: %s", name, err)
	}
	return z
}
