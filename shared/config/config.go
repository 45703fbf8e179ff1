// Package config reads the allocate function's configuration from the
// environment and validates all of it at once, so a misconfigured deployment
// fails its cold start with one error that lists every problem.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// Allocate is the allocate function's configuration.
type Allocate struct {
	GameFabricURL       string
	AllocatePath        string
	TokenSecretID       string
	BackendAddress      string
	FallbackRegion      string
	FallbackEnvironment string
	FallbackArmadaSet   string
	GameInstancesTable  string
	AttemptTimeout      time.Duration
	AllocationLease     time.Duration
	TokenCacheTTL       time.Duration
	RecordRetention     time.Duration
	LinkTimeout         time.Duration
	// MaxAllocationAttempts is how many regions one allocation may try.
	MaxAllocationAttempts int
	// MaxPlayerLatencyMs is the default latency cap; 0 = none.
	MaxPlayerLatencyMs float64
	RegionHealth       RegionHealth
	LogLevel           slog.Level
}

// AllocateURL is where allocation requests are sent.
func (c Allocate) AllocateURL() string {
	return strings.TrimRight(c.GameFabricURL, "/") + "/" + strings.TrimLeft(c.AllocatePath, "/")
}

// Defaults for the optional settings.
const (
	DefaultAttemptTimeout  = 10 * time.Second
	DefaultAllocationLease = 60 * time.Second
	DefaultTokenCacheTTL   = 5 * time.Minute
	DefaultRecordRetention = 7 * 24 * time.Hour
	// DefaultMaxAllocationAttempts: regions tried per allocation.
	DefaultMaxAllocationAttempts = 3
)

// LoadAllocate reads the configuration through getenv (os.Getenv in main).
func LoadAllocate(getenv func(string) string) (Allocate, error) {
	r := reader{getenv: getenv}
	c := Allocate{
		GameFabricURL:         r.url("GAMEFABRIC_URL"),
		AllocatePath:          r.required("GAMEFABRIC_ALLOCATE_PATH"),
		TokenSecretID:         r.required("ALLOCATOR_TOKEN_SECRET_ID"),
		BackendAddress:        r.url("BACKEND_ADDRESS"),
		FallbackRegion:        strings.ToLower(r.optional("FALLBACK_REGION")),
		FallbackEnvironment:   r.optional("FALLBACK_ENVIRONMENT"),
		FallbackArmadaSet:     r.optional("FALLBACK_ARMADA_SET"),
		GameInstancesTable:    r.required("GAME_INSTANCES_TABLE"),
		AttemptTimeout:        r.duration("ALLOCATE_ATTEMPT_TIMEOUT", DefaultAttemptTimeout),
		AllocationLease:       r.duration("ALLOCATION_LEASE", DefaultAllocationLease),
		TokenCacheTTL:         r.duration("TOKEN_CACHE_TTL", DefaultTokenCacheTTL),
		RecordRetention:       r.duration("RECORD_RETENTION", DefaultRecordRetention),
		LinkTimeout:           r.duration("LINK_TIMEOUT", DefaultLinkTimeout),
		MaxAllocationAttempts: r.positiveInt("MAX_ALLOCATION_ATTEMPTS", DefaultMaxAllocationAttempts),
		MaxPlayerLatencyMs:    r.nonNegativeFloat("MAX_PLAYER_LATENCY_MS"),
		RegionHealth:          r.regionHealth(),
		LogLevel:              r.level("LOG_LEVEL"),
	}
	// The lease must outlive one attempt, or a slow attempt could lose its
	// claim to a takeover while it is still talking to GameFabric.
	if c.AttemptTimeout > 0 && c.AllocationLease > 0 && c.AllocationLease <= c.AttemptTimeout {
		r.problem("ALLOCATION_LEASE (%s) must be longer than ALLOCATE_ATTEMPT_TIMEOUT (%s)", c.AllocationLease, c.AttemptTimeout)
	}
	if err := r.err(); err != nil {
		return Allocate{}, err
	}
	return c, nil
}

// reader collects every problem instead of stopping at the first.
type reader struct {
	getenv   func(string) string
	problems []string
}

func (r *reader) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *reader) err() error {
	if len(r.problems) == 0 {
		return nil
	}
	return errors.New("invalid configuration: " + strings.Join(r.problems, "; "))
}

func (r *reader) optional(name string) string { return strings.TrimSpace(r.getenv(name)) }

func (r *reader) required(name string) string {
	v := r.optional(name)
	if v == "" {
		r.problem("%s is required", name)
	}
	return v
}

func (r *reader) url(name string) string {
	v := r.required(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.problem("%s must be an absolute http(s) URL, got %q", name, v)
	}
	return v
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.optional(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.problem("%s must be a positive Go duration such as 10s, got %q", name, v)
		return def
	}
	return d
}

func (r *reader) level(name string) slog.Level {
	switch v := strings.ToLower(r.optional(name)); v {
	case "", "info":
		return slog.LevelInfo
	case "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		r.problem("%s must be one of debug, info, warn, error, got %q", name, v)
		return slog.LevelInfo
	}
}
