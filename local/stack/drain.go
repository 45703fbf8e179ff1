package stack

import (
	"fmt"
	"sort"
	"time"
)

// MaxDrain bounds one drain: long enough to outlast any queue timeout
// (600 s), short enough that a forgotten one ends.
const MaxDrain = time.Hour

// Drain runs region's Allocator dry for d, then lets it refill (d <= 0
// refills it now): while drained, every allocate there answers GameFabric's
// "no game server" with a Retry-After, so placements with a queue timeout
// wait (Queued) and are placed once it refills. region is a Region name
// (us-west) that an Allocator lists; it returns when the region refills.
func (c *Components) Drain(region string, d time.Duration) (time.Time, error) {
	a, str, err := c.listing(region)
	if err != nil {
		return time.Time{}, err
	}
	if d > MaxDrain {
		return time.Time{}, fmt.Errorf("drain %s for %s: at most %s", region, d, MaxDrain)
	}
	var until time.Time
	if d > 0 {
		until = time.Now().Add(d)
	}
	a.Emulator.Drain(str, until)
	return until, nil
}

// DrainedUntil is when a drained region refills; ok is false when it is
// not drained now (or no Allocator lists it).
func (c *Components) DrainedUntil(region string) (until time.Time, ok bool) {
	a, str, err := c.listing(region)
	if err != nil {
		return time.Time{}, false
	}
	return a.Emulator.DrainedUntil(str)
}

// listing is the Allocator that lists region and its region string. Only a
// listed Region may be drained: a misspelt one would drain nothing and
// the placement would not wait, with nobody told why.
func (c *Components) listing(region string) (*Allocator, string, error) {
	var known []string
	for _, a := range c.Allocators {
		if s, ok := a.Regions[region]; ok {
			return a, s, nil
		}
		for r := range a.Regions {
			known = append(known, r)
		}
	}
	sort.Strings(known)
	return nil, "", fmt.Errorf("no Allocator lists Region %q (the Allocators list %v)", region, known)
}
