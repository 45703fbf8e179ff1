package config

import "github.com/gamefabric-alloc/allocsvc/shared/defaults"

// RegionHealth configures the per-region health and circuit breaker.
// An empty Table disables it (every region is always tried). The breaker
// runs on the embedded settings as they are read here.
type RegionHealth struct {
	Table string
	defaults.Breaker
}

func (r *reader) regionHealth() RegionHealth {
	return RegionHealth{Table: r.optional("REGION_HEALTH_TABLE"), Breaker: defaults.Breaker{
		FailureThreshold:     r.positiveInt("REGION_FAILURE_THRESHOLD", defaults.RegionFailureThreshold),
		Cooldown:             r.duration("REGION_COOLDOWN", defaults.RegionCooldown),
		NoPingUnhealthyAfter: r.duration("REGION_NO_PING_UNHEALTHY_AFTER", defaults.RegionNoPingUnhealthyAfter),
		ProbeLease:           defaults.RegionProbeLease, // not read from the environment
	}}
}
