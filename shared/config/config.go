// Package config reads the allocate function's configuration from the
// environment and validates all of it at once, so a misconfigured deployment
// fails its cold start with one error that lists every problem.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Allocate is the allocate function's configuration.
type Allocate struct {
	GameFabricURL      string
	AllocatePath       string
	TokenSecretID      string
	BackendAddress     string
	GameInstancesTable string
	// GameServersTable keeps the game servers that offered rooms; "" =
	// no rooms: every allocation takes a whole server.
	GameServersTable string
	// RoomCallbackTimeout bounds one session callback to a game server.
	RoomCallbackTimeout time.Duration
	// PlacementQueueURL is the SQS queue of queued placements; "" = none,
	// every allocation fails fast.
	PlacementQueueURL string
	TokenCacheTTL     time.Duration
	// Allocation (timing) and Request (what a request that does not say
	// gets) are read whole: allocation.Options runs on them.
	Allocation defaults.Allocation
	Request    defaults.Request
	// Allocators are the Allocators of the regions GAMEFABRIC_ALLOCATORS
	// lists, by lowercased region name; see AllocatorFor.
	Allocators   map[string]Allocator
	RegionHealth RegionHealth
	LogLevel     slog.Level
}

// AllocateURL is where allocation requests are sent.
func (c Allocate) AllocateURL() string {
	return strings.TrimRight(c.GameFabricURL, "/") + "/" + strings.TrimLeft(c.AllocatePath, "/")
}

// Limits on the settings (their defaults are in shared/defaults).
const (
	MaxAllocationAttempts = 10
	// MaxQueueTimeout is the longest a placement may wait for capacity
	// (queueTimeoutSeconds' limit too).
	MaxQueueTimeout = 10 * time.Minute
	// MinAllocationBudget leaves time to try a region after the 3.5 s the
	// allocation keeps for recording its outcome; MaxAllocationBudget is
	// the most that can fit inside the gateway's 30 s at all.
	MinAllocationBudget = 5 * time.Second
	MaxAllocationBudget = 29 * time.Second
	// outcomeReserve is what an allocation keeps of its budget for
	// recording its outcome (shared/allocation's reserves).
	outcomeReserve = 3500 * time.Millisecond
)

// LoadAllocate reads the configuration through getenv (os.Getenv in main).
func LoadAllocate(getenv func(string) string) (Allocate, error) {
	r := reader{getenv: getenv}
	c := Allocate{
		GameFabricURL:       r.url("GAMEFABRIC_URL"),
		AllocatePath:        r.required("GAMEFABRIC_ALLOCATE_PATH"),
		TokenSecretID:       r.required("ALLOCATOR_TOKEN_SECRET_ID"),
		BackendAddress:      r.url("BACKEND_ADDRESS"),
		GameInstancesTable:  r.required("GAME_INSTANCES_TABLE"),
		GameServersTable:    r.optional("GAME_SERVERS_TABLE"),
		RoomCallbackTimeout: r.duration("ROOM_CALLBACK_TIMEOUT", defaults.RoomCallbackTimeout),
		PlacementQueueURL:   r.optional("PLACEMENT_QUEUE_URL"),
		TokenCacheTTL:       r.duration("TOKEN_CACHE_TTL", defaults.TokenCacheTTL),
		Allocation: defaults.Allocation{
			AttemptTimeout: r.duration("ALLOCATE_ATTEMPT_TIMEOUT", defaults.AttemptTimeout),
			Lease:          r.duration("ALLOCATION_LEASE", defaults.AllocationLease),
			Retention:      r.duration("RECORD_RETENTION", defaults.RecordRetention),
			LinkTimeout:    r.duration("LINK_TIMEOUT", defaults.LinkTimeout),
			Budget:         r.duration("ALLOCATION_BUDGET", defaults.AllocationBudget),
		},
		Request: defaults.Request{
			Region:             r.regionName("FALLBACK_REGION"),
			Environment:        r.optional("FALLBACK_ENVIRONMENT"),
			ArmadaSet:          r.optional("FALLBACK_ARMADA_SET"),
			MaxPlayerLatencyMs: r.nonNegativeFloat("MAX_PLAYER_LATENCY_MS"),
			MaxAttempts:        r.positiveInt("MAX_ALLOCATION_ATTEMPTS", defaults.MaxAllocationAttempts),
			QueueTimeout:       r.nonNegativeDuration("QUEUE_TIMEOUT", defaults.QueueTimeout),
		},
		RegionHealth: r.regionHealth(),
		LogLevel:     r.level("LOG_LEVEL"),
	}
	c.Allocators = r.allocators("GAMEFABRIC_ALLOCATORS", c.AllocateURL(), c.TokenSecretID)
	c.check(&r)
	if err := r.err(); err != nil {
		return Allocate{}, err
	}
	return c, nil
}

// check adds the rules between settings.
func (c Allocate) check(r *reader) {
	if c.Allocation.Budget < MinAllocationBudget || c.Allocation.Budget > MaxAllocationBudget {
		r.problem("ALLOCATION_BUDGET (%s) must be between %s and %s: the outcome write keeps 3.5 s of it, and API Gateway gives up after 30 s",
			c.Allocation.Budget, MinAllocationBudget, MaxAllocationBudget)
	}
	// The lease must outlive the whole allocation, or a live call could
	// have its claim adopted by a server's link or taken over.
	if c.Allocation.Lease <= c.Allocation.Budget {
		r.problem("ALLOCATION_LEASE (%s) must be longer than ALLOCATION_BUDGET (%s)", c.Allocation.Lease, c.Allocation.Budget)
	}
	// A claim carries a TTL of RECORD_RETENTION and may stay in doubt for
	// lease + LINK_TIMEOUT: expiring it sooner would let a retry allocate a
	// second server while the first could still link.
	if inDoubt := c.Allocation.Lease + c.Allocation.LinkTimeout; c.Allocation.Retention < inDoubt {
		r.problem("RECORD_RETENTION (%s) must be at least ALLOCATION_LEASE + LINK_TIMEOUT (%s)", c.Allocation.Retention, inDoubt)
	}
	// A callback must fit the allocation's time for its attempts: the
	// budget less the 3.5 s kept for recording the outcome.
	if most := c.Allocation.Budget - outcomeReserve; c.RoomCallbackTimeout > most {
		r.problem("ROOM_CALLBACK_TIMEOUT (%s) must be at most %s: a session callback has to fit in ALLOCATION_BUDGET (%s) with time to record the outcome",
			c.RoomCallbackTimeout, most, c.Allocation.Budget)
	}
	r.queueTimeout("QUEUE_TIMEOUT", c.Request.QueueTimeout, c.PlacementQueueURL, "a queued placement")
	if c.Request.MaxAttempts > MaxAllocationAttempts {
		r.problem("MAX_ALLOCATION_ATTEMPTS must be at most %d, got %d", MaxAllocationAttempts, c.Request.MaxAttempts)
	}
}

// queueTimeout checks a queue timeout named name: at most MaxQueueTimeout,
// and only with a placement queue to wait in (what retries what).
func (r *reader) queueTimeout(name string, d time.Duration, queueURL, what string) {
	if d > MaxQueueTimeout {
		r.problem("%s (%s) must be at most %s", name, d, MaxQueueTimeout)
	}
	if d > 0 && queueURL == "" {
		r.problem("%s (%s) needs PLACEMENT_QUEUE_URL: without the placement queue nothing would retry %s", name, d, what)
	}
}

// regionName reads an optional region name, normalised as callers' are.
func (r *reader) regionName(name string) string {
	v := region.Normalize(r.optional(name))
	if v != "" && !region.Valid(v) {
		r.problem("%s must be a region name: %s, got %q", name, region.Rule, v)
	}
	return v
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
	if p := urlProblem(v); p != "" {
		r.problem("%s %s", name, p)
	}
	return v
}

// urlProblem says what is wrong with v as an upstream URL, "" if nothing.
func urlProblem(v string) string {
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Sprintf("must be an absolute http(s) URL, got %q", v)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		// Bearer tokens travel on these connections.
		return fmt.Sprintf("must be an https:// URL (http:// only for a loopback host such as 127.0.0.1), got %q", v)
	}
	return ""
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
