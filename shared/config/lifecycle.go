package config

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// Lifecycle is the link-back and health-sweep functions' configuration.
type Lifecycle struct {
	GameInstancesTable string
	// GameServersTable keeps the game servers that offered rooms; "" =
	// links may not offer rooms.
	GameServersTable string
	// Health is game-instance health, read whole: lifecycle.Policy runs on it.
	Health       defaults.Health
	RegionHealth RegionHealth
	LogLevel     slog.Level
	// GameServerEndpoint is where game servers call (FunctionUrl or
	// HttpApi); HeartbeatInterval, how often the link-back answers tell
	// them to heartbeat, follows from it.
	GameServerEndpoint string
	HeartbeatInterval  time.Duration
}

// LoadLifecycle reads the lifecycle configuration.
func LoadLifecycle(getenv func(string) string) (Lifecycle, error) {
	r := reader{getenv: getenv}
	c := Lifecycle{
		GameInstancesTable: r.required("GAME_INSTANCES_TABLE"),
		GameServersTable:   r.optional("GAME_SERVERS_TABLE"),
		Health:             r.health(),
		RegionHealth:       r.regionHealth(),
		LogLevel:           r.level("LOG_LEVEL"),
	}
	c.GameServerEndpoint = r.gameServerEndpoint()
	c.HeartbeatInterval = c.Health.Period
	if c.GameServerEndpoint == defaults.GameServerEndpointHTTPAPI {
		c.HeartbeatInterval = c.Health.Period / defaults.HeartbeatsPerPeriodHTTPAPI
	}
	if err := r.err(); err != nil {
		return Lifecycle{}, err
	}
	return c, nil
}

func (r *reader) health() defaults.Health {
	return defaults.Health{
		LinkTimeout:      r.duration("LINK_TIMEOUT", defaults.LinkTimeout),
		Period:           r.duration("HEALTH_PERIOD", defaults.HealthPeriod),
		FailureThreshold: r.positiveInt("HEALTH_FAILURE_THRESHOLD", defaults.HealthFailureThreshold),
		InitialDelay:     r.nonNegativeDuration("HEALTH_INITIAL_DELAY", defaults.HealthInitialDelay),
		Retention:        r.duration("RECORD_RETENTION", defaults.RecordRetention),
	}
}

func (r *reader) gameServerEndpoint() string {
	switch v := r.optional("GAME_SERVER_ENDPOINT"); v {
	case "":
		return defaults.GameServerEndpoint
	case defaults.GameServerEndpointFunctionURL, defaults.GameServerEndpointHTTPAPI:
		return v
	default:
		r.problem("GAME_SERVER_ENDPOINT must be %s or %s, got %q", defaults.GameServerEndpointFunctionURL, defaults.GameServerEndpointHTTPAPI, v)
		return defaults.GameServerEndpoint
	}
}

func (r *reader) positiveInt(name string, def int) int {
	v := r.optional(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		r.problem("%s must be a whole number of at least 1, got %q", name, v)
		return def
	}
	return n
}

// nonNegativeDuration allows 0: health checks may start right at link.
func (r *reader) nonNegativeDuration(name string, def time.Duration) time.Duration {
	v := r.optional(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		r.problem("%s must be a Go duration of 0 or more such as 30s, got %q", name, v)
		return def
	}
	return d
}

func (r *reader) nonNegativeFloat(name string) float64 {
	v := r.optional(name)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f != f {
		r.problem("%s must be a number of 0 or more, got %q", name, v)
		return 0
	}
	return f
}
