package regionhealth

import "github.com/gamefabric-alloc/allocsvc/shared/allocation"

// The breaker and Off are the allocation's region health (checked here,
// so that the package itself need not import the allocation).
var (
	_ allocation.RegionHealth = (*Breaker)(nil)
	_ allocation.RegionHealth = Off{}
)
