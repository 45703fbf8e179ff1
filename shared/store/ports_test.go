package store

import (
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
)

// GameInstances is the allocation's and the lifecycle's store (checked
// here, so that the adapter need not import the domains it serves).
var (
	_ allocation.Store = (*GameInstances)(nil)
	_ lifecycle.Store  = (*GameInstances)(nil)
)
