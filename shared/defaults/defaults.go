// Package defaults is the one place for every setting's default value and
// for the groups of settings the domain runs on (groups.go): shared/config
// reads each group whole, applying the defaults (the only place that
// does), and the domain embeds the group it runs on, so nothing copies a
// setting from one to the other. template.yaml's parameter defaults must
// equal these (local/stack's TestTemplateDefaultsAreTheConfigurations
// checks every variable a parameter sets), the tests' complete values
// (regionhealth.DefaultBreakerPolicy, lifecycle.DefaultPolicy,
// allocation.DefaultOptions) are the groups' defaults, and
// docs/configuration.md quotes them. A default only the template uses (the
// health sweep's schedule) is the template's alone.
package defaults

import "time"

// Allocation.
const (
	AttemptTimeout  = 10 * time.Second // ALLOCATE_ATTEMPT_TIMEOUT / AllocateAttemptTimeout
	AllocationLease = 60 * time.Second // ALLOCATION_LEASE / AllocationLease
	// AllocationBudget leaves API Gateway's 30 s integration timeout 5 s
	// for the cold start and the gateway's hop (ALLOCATION_BUDGET).
	AllocationBudget      = 25 * time.Second
	TokenCacheTTL         = 5 * time.Minute    // TOKEN_CACHE_TTL / TokenCacheTtl
	RecordRetention       = 7 * 24 * time.Hour // RECORD_RETENTION / RecordRetention
	MaxAllocationAttempts = 3                  // MAX_ALLOCATION_ATTEMPTS: regions tried per allocation
	// RoomCallbackTimeout bounds one session callback to a game server
	// with a free room (ROOM_CALLBACK_TIMEOUT / RoomCallbackTimeout).
	RoomCallbackTimeout = 2 * time.Second
	// QueueTimeout is how long a placement without queueTimeoutSeconds
	// waits for capacity (QUEUE_TIMEOUT / QueueTimeout): 0, fail fast.
	QueueTimeout = 0 * time.Second
)

// FlexMatch front door.
const (
	// FlexMatchQueueTimeout is how long a match waits for capacity
	// (FLEXMATCH_QUEUE_TIMEOUT / FlexMatchQueueTimeout): a drained buffer
	// delays the match instead of failing it.
	FlexMatchQueueTimeout = 60 * time.Second
	// MatchmakingEventName is the re-published event's detail-type and
	// detail.type (MATCHMAKING_EVENT_NAME / MatchmakingEventName), the name
	// GameFabric's FlexMatch guide gives it (GF_EVENT_NAME).
	MatchmakingEventName = "GameFabricMatchmakingSucceeded"
	// DescribeMatchmakingTimeout bounds reading a match's tickets, every
	// DescribeMatchmaking call and retry: past it the region comes from
	// customEventData.region.
	DescribeMatchmakingTimeout = 3 * time.Second
)

// Game-instance health (Agones-style).
const (
	LinkTimeout            = 2 * time.Minute  // LINK_TIMEOUT / LinkTimeout
	HealthPeriod           = 30 * time.Second // HEALTH_PERIOD / HealthPeriod
	HealthFailureThreshold = 3                // HEALTH_FAILURE_THRESHOLD / HealthFailureThreshold
	HealthInitialDelay     = 30 * time.Second // HEALTH_INITIAL_DELAY / HealthInitialDelay
)

// Where game servers call (GAME_SERVER_ENDPOINT / GameServerEndpoint), and
// so how often they are told to heartbeat: every HEALTH_PERIOD behind the
// function URL, where a call costs a Lambda request only; every
// HeartbeatsPerPeriodHttpApi-th of it behind the HTTP API, as before.
const (
	GameServerEndpointFunctionURL = "FunctionUrl"
	GameServerEndpointHTTPAPI     = "HttpApi"
	GameServerEndpoint            = GameServerEndpointFunctionURL
	HeartbeatsPerPeriodHTTPAPI    = 3
)

// Region health (the breaker).
const (
	RegionFailureThreshold     = 3                // REGION_FAILURE_THRESHOLD / RegionFailureThreshold
	RegionCooldown             = 60 * time.Second // REGION_COOLDOWN / RegionCooldown
	RegionNoPingUnhealthyAfter = 5 * time.Minute  // REGION_NO_PING_UNHEALTHY_AFTER / RegionNoPingUnhealthyAfter
	// RegionProbeLease is how long one allocation holds a half-open
	// region's probe (not configurable).
	RegionProbeLease = 30 * time.Second
)

// Ping cache and schedules.
const (
	PingPath            = "ping"           // GAMEFABRIC_PING_PATH / GameFabricPingPath
	PingRefreshSchedule = "rate(1 minute)" // PING_REFRESH_SCHEDULE / PingRefreshSchedule
)

// Events (EventsFunction).
const (
	// EventPublishAttempts: how often an event EventBridge refused is put
	// before its stream record is handed back to Lambda (not configurable:
	// the event source mapping's retries, EventsMaxRetryAttempts, are the
	// knob).
	EventPublishAttempts = 3
	EventPublishBackoff  = 100 * time.Millisecond
)

// An Agones allocator service's settings (an entry of GAMEFABRIC_ALLOCATORS
// with "kind": "agones").
const (
	AgonesNamespace = "default"
	// AgonesAnnotationPrefix + a payload field's name is its annotation:
	// the keys GameFabric's allocation sidecar writes with
	// ALLOC_PAYLOAD_ANNOTATION=payload-.
	AgonesAnnotationPrefix = "agones.dev/sdk-payload-"
	// AgonesUnallocatedStatus is Agones' default httpUnallocatedStatusCode.
	AgonesUnallocatedStatus = 429
)

// AgonesMatchLabels are the labels seed 000 puts on an ArmadaSet, with the
// request's gameServerVersion's parts as placeholders (a map is no
// constant: each call is a fresh copy).
func AgonesMatchLabels() map[string]string {
	return map[string]string{"allocator.nitrado.net/env": "{env}", "allocator.nitrado.net/armadaset": "{armadaset}"}
}

// GameLift's placement API (GameLiftApiFunction).
const (
	// GameLiftQueueTimeout is a GAMELIFT_QUEUES queue's timeoutSeconds
	// when it names none: GameLift's own default for a game session queue.
	GameLiftQueueTimeout = 600 * time.Second
	// GameLiftInProgressWait bounds how long one call waits out another's
	// claim on its placement (ALLOCATION_IN_PROGRESS is retried inside the
	// call, never answered) before it answers ThrottlingException, which
	// the SDKs retry (not configurable).
	GameLiftInProgressWait = 10 * time.Second
	// GameLiftKeysRefreshEvery is how often, at most, an unknown access key
	// re-reads the keys' secret, so a key just added works at once and a
	// flood of made-up keys costs one Secrets Manager read per period.
	GameLiftKeysRefreshEvery = 5 * time.Second
)
