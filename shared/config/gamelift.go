package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// GameLiftAPI is GameLiftApiFunction's configuration: the allocate
// settings (a placement is allocated exactly as an API call is), the
// queues, where placements are kept, and the access keys' secret.
type GameLiftAPI struct {
	Allocate
	// PlacementsTable keeps each placement's inputs
	// (GAME_SESSION_PLACEMENTS_TABLE).
	PlacementsTable string
	// KeysSecretID names the secret of the access keys it accepts
	// (GAMELIFT_API_KEYS_SECRET_ID): {"<access key id>": "<secret key>"}.
	KeysSecretID string
	// Queues are GAMELIFT_QUEUES by queue name; unset, one queue named
	// DefaultGameLiftQueue places in FALLBACK_REGION.
	Queues map[string]GameLiftQueue
}

// DefaultGameLiftQueue is the one queue a deployment without
// GAMELIFT_QUEUES has: FALLBACK_REGION, the fallback version, 600 s.
const DefaultGameLiftQueue = "default"

// GameLiftQueue is a game session queue, as GAMELIFT_QUEUES describes it.
type GameLiftQueue struct {
	// Regions are its destinations in priority order (at most
	// MaxGameLiftQueueRegions); the deployment's FALLBACK_REGION is not
	// added to them.
	Regions []string `json:"regions"`
	// Timeout is how long a placement waits for capacity
	// (timeoutSeconds, 1-600; GameLift's 600 when unset).
	Timeout time.Duration `json:"-"`
	// GameServerVersion is the allocation's "<environment>::<armadaSet>";
	// "" takes FALLBACK_ENVIRONMENT and FALLBACK_ARMADA_SET.
	GameServerVersion string `json:"gameServerVersion"`
	// LatencyPolicies are GameLift's PlayerLatencyPolicies.
	LatencyPolicies []GameLiftLatencyPolicy `json:"playerLatencyPolicies"`
}

// GameLiftLatencyPolicy is a queue's PlayerLatencyPolicy; a Duration of 0
// (only on the last) holds until the placement's timeout.
type GameLiftLatencyPolicy struct {
	MaxLatencyMs    int `json:"maximumIndividualPlayerLatencyMilliseconds"`
	DurationSeconds int `json:"policyDurationSeconds"`
}

// Queue limits: a queue name as GameLift's, a plan of at most ten regions
// (preferredRegions' limit) and ten policies (latencyPolicies').
const (
	MaxGameLiftQueueRegions  = 10
	MaxGameLiftQueuePolicies = 10
	maxGameLiftQueueName     = 128
)

// LoadGameLiftAPI reads GameLiftApiFunction's configuration.
func LoadGameLiftAPI(getenv func(string) string) (GameLiftAPI, error) {
	base, err := LoadAllocate(getenv)
	r := reader{getenv: getenv}
	if err != nil {
		r.problem("%s", strings.TrimPrefix(err.Error(), "invalid configuration: "))
	}
	c := GameLiftAPI{Allocate: base, PlacementsTable: r.required("GAME_SESSION_PLACEMENTS_TABLE"),
		KeysSecretID: r.required("GAMELIFT_API_KEYS_SECRET_ID"), Queues: r.gameLiftQueues("GAMELIFT_QUEUES", base.Request.Region)}
	if r.optional("PLACEMENT_QUEUE_URL") == "" {
		r.problem("PLACEMENT_QUEUE_URL is required: a GameLift placement waits for capacity in the placement queue")
	}
	if err := r.err(); err != nil {
		return GameLiftAPI{}, err
	}
	return c, nil
}

// gameLiftQueues reads the queues: a JSON object of queue name to queue,
// at least one, every problem of every queue reported; unset, the default
// queue in fallback (FALLBACK_REGION).
func (r *reader) gameLiftQueues(name, fallback string) map[string]GameLiftQueue {
	raw := r.optional(name)
	if raw == "" {
		if fallback == "" {
			r.problem("%s is required when FALLBACK_REGION is not set (without it, the one queue %q places in FALLBACK_REGION)", name, DefaultGameLiftQueue)
			return nil
		}
		return map[string]GameLiftQueue{DefaultGameLiftQueue: {Regions: []string{fallback}, Timeout: defaults.GameLiftQueueTimeout}}
	}
	var doc map[string]struct {
		GameLiftQueue
		TimeoutSeconds *int `json:"timeoutSeconds"`
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || len(doc) == 0 {
		r.problem(`%s must be a JSON object of at least one queue, {"<queue name>": {"regions": [...], "timeoutSeconds": 600, `+
			`"gameServerVersion": "env::armadaSet", "playerLatencyPolicies": [...]}}: %v`, name, err)
		return nil
	}
	names := slices.Sorted(maps.Keys(doc))
	queues := make(map[string]GameLiftQueue, len(doc))
	for _, n := range names {
		q := doc[n].GameLiftQueue
		q.Timeout = defaults.GameLiftQueueTimeout
		if t := doc[n].TimeoutSeconds; t != nil {
			q.Timeout = time.Duration(*t) * time.Second
		}
		for i, reg := range q.Regions {
			q.Regions[i] = region.Normalize(reg)
		}
		for _, p := range gameLiftQueueProblems(n, q) {
			r.problem("%s queue %q: %s", name, n, p)
		}
		queues[n] = q
	}
	return queues
}

// gameLiftQueueProblems is what is wrong with queue q named n.
func gameLiftQueueProblems(n string, q GameLiftQueue) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !gameinstance.IsGameLiftName(n, maxGameLiftQueueName) {
		add("its name must be 1-%d letters, digits and -", maxGameLiftQueueName)
	}
	seen := map[string]bool{}
	for _, reg := range q.Regions {
		if !region.Valid(reg) || seen[reg] {
			add("regions must be distinct region names: %s", region.Rule)
			break
		}
		seen[reg] = true
	}
	if len(q.Regions) == 0 || len(q.Regions) > MaxGameLiftQueueRegions {
		add("regions must list 1-%d regions", MaxGameLiftQueueRegions)
	}
	if q.Timeout < time.Second || q.Timeout > MaxQueueTimeout {
		add("timeoutSeconds must be 1-%d", int(MaxQueueTimeout/time.Second))
	}
	if len(q.LatencyPolicies) > MaxGameLiftQueuePolicies {
		add("playerLatencyPolicies may list at most %d policies", MaxGameLiftQueuePolicies)
	}
	for i, p := range q.LatencyPolicies {
		switch {
		case p.MaxLatencyMs < 1 || p.MaxLatencyMs > 60000:
			add("playerLatencyPolicies[%d].maximumIndividualPlayerLatencyMilliseconds must be 1-60000", i)
		case i > 0 && p.MaxLatencyMs <= q.LatencyPolicies[i-1].MaxLatencyMs:
			add("playerLatencyPolicies[%d] must allow more latency than the one before: caps only relax", i)
		case p.DurationSeconds < 0 || p.DurationSeconds > int(MaxQueueTimeout/time.Second) || p.DurationSeconds == 0 && i < len(q.LatencyPolicies)-1:
			add("playerLatencyPolicies[%d].policyDurationSeconds must be 1-600 (only the last may leave it out)", i)
		}
	}
	return problems
}
