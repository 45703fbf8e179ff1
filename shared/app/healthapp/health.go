// Package healthapp builds region health (the breaker over regions) for
// the composition roots that use it: allocate, placement, matchmaking,
// ping refresh, regions and the sweep. It is a package of its own so that
// the link-back function does not link it.
package healthapp

import (
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store/regiontable"
)

// RegionHealth is the breaker on DynamoDB, or regionhealth.Off when region
// health is off (no table configured). The breaker is also returned on its
// own (nil when off) for the regions API, which leaves health out of its
// answer when it is off.
func RegionHealth(db regiontable.DB, c config.RegionHealth) (regionhealth.Regions, *regionhealth.Breaker) {
	if c.Table == "" {
		return regionhealth.Off{}, nil
	}
	p := regionhealth.BreakerPolicy{Breaker: c.Breaker}
	b := &regionhealth.Breaker{Store: regiontable.New(db, c.Table, p), Policy: p}
	return b, b
}
