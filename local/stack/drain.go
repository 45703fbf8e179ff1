package stack

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	if a, s := c.AllocatorFor(region); a.Regions[region] != "" {
		return a, s, nil
	}
	known := slices.Sorted(slices.Values(c.MatchRegions()))
	return nil, "", fmt.Errorf("no Allocator lists Region %q (the Allocators list %v)", region, known)
}

// DrainSchedule is one entry of dev.yaml's gamefabric.drain (and of make
// dev's DRAIN): Region's Allocator runs dry for For once the stack is up,
// and again every Every (0 = once).
type DrainSchedule struct {
	Region     string
	For, Every time.Duration
}

// ParseDrain reads "us-west:20s" (once) or "us-west:20s/1m" (every minute).
func ParseDrain(s string) (DrainSchedule, error) {
	region, spec, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || region == "" {
		return DrainSchedule{}, fmt.Errorf("drain %q: want <region>:<for>[/<every>], e.g. us-west:20s or us-west:20s/1m", s)
	}
	forSpec, everySpec, repeats := strings.Cut(spec, "/")
	d := DrainSchedule{Region: region}
	var err error
	if d.For, err = time.ParseDuration(forSpec); err != nil || d.For < time.Second || d.For > MaxDrain {
		return DrainSchedule{}, fmt.Errorf("drain %q: the time dry must be a duration from 1s to %s", s, MaxDrain)
	}
	if repeats {
		// Every must leave the region some time refilled between drains.
		if d.Every, err = time.ParseDuration(everySpec); err != nil || d.Every <= d.For || d.Every > 24*time.Hour {
			return DrainSchedule{}, fmt.Errorf("drain %q: the period must be a duration longer than %s, at most 24h", s, d.For)
		}
	}
	return d, nil
}

func (d DrainSchedule) String() string {
	if d.Every > 0 {
		return fmt.Sprintf("%s runs dry for %s every %s", d.Region, d.For, d.Every)
	}
	return fmt.Sprintf("%s runs dry for %s once the stack is up", d.Region, d.For)
}

// AddDrains adds make dev's DRAIN (comma-separated schedules) to the
// configuration's, checking them as LoadConfig does.
func (c *Config) AddDrains(spec string) error {
	for part := range strings.SplitSeq(spec, ",") {
		if strings.TrimSpace(part) != "" {
			c.GameFabric.Drain = append(c.GameFabric.Drain, strings.TrimSpace(part))
		}
	}
	return c.validate()
}

// drainSchedules parses gamefabric.drain (validate has checked it).
func (c Config) drainSchedules() []DrainSchedule {
	var out []DrainSchedule
	for _, s := range c.GameFabric.Drain {
		if d, err := ParseDrain(s); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// runDrain drains d.Region on its schedule until ctx ends, saying so in the
// stack's log as it runs dry and refills.
func (s *Stack) runDrain(ctx context.Context, d DrainSchedule) {
	defer s.wg.Done()
	every(ctx, 0, d.Every, func() {
		until, err := s.Drain(d.Region, d.For)
		if err != nil {
			s.log.Warn("drain", "region", d.Region, "error", err)
			return
		}
		s.log.Info("drain: the region's Allocator runs dry", "region", d.Region, "until", until.Format(time.TimeOnly))
		select {
		case <-ctx.Done():
		case <-time.After(d.For):
			s.log.Info("drain: the region refilled", "region", d.Region)
		}
	})
}

// every calls do after first and then every period (0: once) until ctx
// ends, on a fixed rate however long do takes.
func every(ctx context.Context, first, period time.Duration, do func()) {
	for next := time.Now().Add(first); ; next = next.Add(period) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		do()
		if period <= 0 {
			return
		}
	}
}
