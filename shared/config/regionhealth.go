package config

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// RegionHealth configures the per-region health and circuit breaker.
// An empty Table disables it (every region is always tried).
type RegionHealth struct {
	Table                string
	FailureThreshold     int
	Cooldown             time.Duration
	NoPingUnhealthyAfter time.Duration
	// ProbeLease is not read from the environment; it is here so that the
	// breaker's policy comes whole from the configuration.
	ProbeLease time.Duration
}

func (r *reader) regionHealth() RegionHealth {
	return RegionHealth{
		Table:                r.optional("REGION_HEALTH_TABLE"),
		FailureThreshold:     r.positiveInt("REGION_FAILURE_THRESHOLD", defaults.RegionFailureThreshold),
		Cooldown:             r.duration("REGION_COOLDOWN", defaults.RegionCooldown),
		NoPingUnhealthyAfter: r.duration("REGION_NO_PING_UNHEALTHY_AFTER", defaults.RegionNoPingUnhealthyAfter),
		ProbeLease:           defaults.RegionProbeLease,
	}
}
