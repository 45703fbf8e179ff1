package defaults

import "time"

// The settings groups. shared/config reads a group whole and the domain
// runs on it whole: lifecycle.Policy embeds Health, regionhealth's
// BreakerPolicy embeds Breaker, allocation.Options embeds Allocation and
// takes Request as its Defaults. So a new setting of a group is its
// constant above, its field and default value here, its reader line in
// shared/config, template.yaml and docs/configuration.md; no field is
// copied from the configuration to the domain in between.

// Health is game-instance health (Agones-style).
type Health struct {
	// LinkTimeout: an Allocated instance that has not linked by then is
	// Unhealthy (LinkTimeout): the allocation silently failed.
	LinkTimeout time.Duration
	// Period, FailureThreshold, InitialDelay: a Linked instance whose last
	// heartbeat (or link, plus InitialDelay) is older than Period ×
	// FailureThreshold is Unhealthy (MissedHeartbeats).
	Period           time.Duration
	FailureThreshold int
	InitialDelay     time.Duration
	// Retention: Ended and Unhealthy records expire this long after.
	Retention time.Duration
}

// HealthDefaults is Health with every default.
var HealthDefaults = Health{LinkTimeout: LinkTimeout, Period: HealthPeriod, FailureThreshold: HealthFailureThreshold,
	InitialDelay: HealthInitialDelay, Retention: RecordRetention}

// Breaker is region health: the breaker and the regions' staleness.
type Breaker struct {
	// FailureThreshold consecutive failures make a region Unhealthy.
	FailureThreshold int
	// Cooldown is how long the breaker stays open after the region becomes
	// Unhealthy or a probe fails.
	Cooldown time.Duration
	// NoPingUnhealthyAfter: a known region without ping targets (and without
	// a successful allocation) for this long becomes Unhealthy.
	NoPingUnhealthyAfter time.Duration
	// ProbeLease is how long one half-open probe holds the region; a probe
	// that never reports back frees it after this.
	ProbeLease time.Duration
}

// BreakerDefaults is Breaker with every default.
var BreakerDefaults = Breaker{FailureThreshold: RegionFailureThreshold, Cooldown: RegionCooldown,
	NoPingUnhealthyAfter: RegionNoPingUnhealthyAfter, ProbeLease: RegionProbeLease}

// Allocation is the allocate use case's timing.
type Allocation struct {
	AttemptTimeout time.Duration // one call to an Allocator
	Lease          time.Duration // how long a claim holds the game instance
	Retention      time.Duration // how long finished records are kept
	LinkTimeout    time.Duration // how long an allocated server has to link back
	// Budget bounds one allocation, the outcome write included, below API
	// Gateway's 30 s.
	Budget time.Duration
}

// AllocationDefaults is Allocation with every default.
var AllocationDefaults = Allocation{AttemptTimeout: AttemptTimeout, Lease: AllocationLease, Retention: RecordRetention,
	LinkTimeout: LinkTimeout, Budget: AllocationBudget}

// Request is what an allocation request that does not say gets (the
// plugin's fallback* settings) and the region-selection limits.
type Request struct {
	Region      string // FALLBACK_REGION
	Environment string // FALLBACK_ENVIRONMENT
	ArmadaSet   string // FALLBACK_ARMADA_SET
	// MaxPlayerLatencyMs caps a region's worst player latency when the
	// request sets no cap; 0 = no cap.
	MaxPlayerLatencyMs float64
	// MaxAttempts is how many regions one allocation tries: at least 1.
	MaxAttempts int
	// QueueTimeout is how long a placement may wait for capacity when the
	// request does not say; 0 = fail fast.
	QueueTimeout time.Duration
}

// RequestDefaults is Request with every default (no fallback region,
// environment or armada set, and no latency cap).
var RequestDefaults = Request{MaxAttempts: MaxAllocationAttempts, QueueTimeout: QueueTimeout}
