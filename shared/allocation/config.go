package allocation

import "github.com/gamefabric-alloc/allocsvc/shared/config"

// OptionsFrom is the part of Options the configuration decides. The caller
// adds the ports (store, allocator, tokens, metrics, region health), so the
// Lambda and anything else serving allocations behave the same.
func OptionsFrom(c config.Allocate) Options {
	return Options{
		Defaults: Defaults{Region: c.FallbackRegion, Environment: c.FallbackEnvironment, ArmadaSet: c.FallbackArmadaSet,
			MaxAttempts: c.MaxAllocationAttempts, MaxPlayerLatencyMs: c.MaxPlayerLatencyMs},
		BackendAddress: c.BackendAddress,
		AttemptTimeout: c.AttemptTimeout,
		Lease:          c.AllocationLease,
		Retention:      c.RecordRetention,
		LinkTimeout:    c.LinkTimeout,
		Budget:         c.AllocationBudget,
	}
}
