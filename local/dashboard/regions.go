package dashboard

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// regionsTTL is how long one read of the regions serves the page: they
// change on the ping refresher's schedule (minutes) and with allocation
// outcomes, while the page asks every second, each time an invocation of
// the regions function.
const regionsTTL = 2 * time.Second

// regionsCache holds the last read of GET /v1/regions and region health.
type regionsCache struct {
	mu     sync.Mutex
	at     time.Time
	api    []allocclient.Region
	health []regionhealth.Health
	err    error
}

func (c *regionsCache) get(ctx context.Context, api apiCalls, health func(context.Context) ([]regionhealth.Health, error)) ([]allocclient.Region, []regionhealth.Health, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < regionsTTL {
		return c.api, c.health, c.err
	}
	var errs []error
	var regions []allocclient.Region
	list, err := api.Regions(ctx)
	if err == nil {
		regions = list.Regions
	} else {
		errs = append(errs, errors.New("GET /v1/regions: "+err.Error()))
	}
	var hs []regionhealth.Health
	if health != nil {
		if hs, err = health(ctx); err != nil {
			errs = append(errs, errors.New("region health: "+err.Error()))
		}
	}
	c.at, c.api, c.health, c.err = time.Now(), regions, hs, errors.Join(errs...)
	return c.api, c.health, c.err
}
