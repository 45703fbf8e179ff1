// Package pingcache keeps per-region ping targets so game clients can
// measure latency to each region and pick one. A scheduled refresher writes
// them; the regions API reads them.
package pingcache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Entry is one region's cached ping targets.
type Entry struct {
	Region      string
	Zone        string
	Targets     []gamefabric.PingTarget
	RefreshedAt time.Time
	ExpiresAt   time.Time
}

// Store holds the cache.
type Store interface {
	// List returns every stored entry, expired ones included.
	List(ctx context.Context) ([]Entry, error)
	// Replace makes entries the whole cache: it writes them and removes
	// every other region, and reports how many it removed.
	Replace(ctx context.Context, entries []Entry) (removed int, err error)
}

// Source is GameFabric's Ping Service.
type Source interface {
	Fetch(ctx context.Context, token string) (gamefabric.Ping, error)
}

// Tokens supplies the Ping Service's bearer token.
type Tokens interface {
	Token(ctx context.Context) (string, error)
	Refresh(ctx context.Context, stale string) (string, error)
}

// Select turns an upstream answer into cache entries, sorted by region.
// With a zone map only mapped regions are kept; without one, all are (with
// no zone). A region without targets is omitted: clients have nothing to
// ping there. Entries live for three refresh periods, so one or two failed
// refreshes do not empty the cache but a stopped refresher does.
func Select(regions map[string][]gamefabric.PingTarget, zones map[string]string, now time.Time, period time.Duration) []Entry {
	entries := make([]Entry, 0, len(regions))
	for region, targets := range regions {
		zone, mapped := zones[region]
		if len(targets) == 0 || len(zones) > 0 && !mapped {
			continue
		}
		entries = append(entries, Entry{Region: region, Zone: zone, Targets: targets, RefreshedAt: now, ExpiresAt: now.Add(3 * period)})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Region < entries[j].Region })
	return entries
}

// Live returns the entries not yet expired at now, sorted by region.
// DynamoDB deletes expired items lazily, so readers must filter.
func Live(entries []Entry, now time.Time) []Entry {
	live := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if e.ExpiresAt.After(now) {
			live = append(live, e)
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Region < live[j].Region })
	return live
}

// Unpinged adds to entries an entry without targets for each of regions
// that has none: regions the deployment serves (an Agones allocator's)
// whose players may have nothing to ping, which clients must still be
// able to pick. Sorted by region.
func Unpinged(entries []Entry, regions []string, zones map[string]string, now time.Time, period time.Duration) []Entry {
	for _, region := range regions {
		if !slices.ContainsFunc(entries, func(e Entry) bool { return e.Region == region }) {
			entries = append(entries, Entry{Region: region, Zone: zones[region], Targets: []gamefabric.PingTarget{}, RefreshedAt: now,
				ExpiresAt: now.Add(3 * period)})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Region < entries[j].Region })
	return entries
}

// Refresher rebuilds the cache from GameFabric.
type Refresher struct {
	Source Source
	Tokens Tokens
	Store  Store
	Zones  map[string]string
	// Unpinged are regions listed with or without ping targets (an Agones
	// allocator's): their targets, if any, still come from the Ping
	// Service, and lacking them never makes them Unhealthy.
	Unpinged []string
	Period   time.Duration
	Now      func() time.Time
	// Health, when set, learns which regions have live ping targets.
	Health interface {
		RecordPing(ctx context.Context, regionsWithTargets, knownRegions []string, now time.Time) error
	}
}

// Summary is what one refresh did; it is the scheduled Lambda's result.
// Upstream counts the regions of the answer with a usable name (those
// without a usable target included); the embedded report, flattened into
// the same JSON object, counts what the answer held that we left out.
type Summary struct {
	Upstream int      `json:"upstreamRegions"`
	Stored   []string `json:"storedRegions"`
	Removed  int      `json:"removedRegions"`
	gamefabric.PingReport
}

// Refresh fetches and stores. On any upstream or decoding failure it returns
// the error and leaves the cache untouched, so the Lambda error metric shows
// it and clients keep the last good targets until they expire.
func (r *Refresher) Refresh(ctx context.Context) (Summary, error) {
	log := logging.FromContext(ctx)
	answer, err := r.fetch(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("fetch ping targets from the Ping Service: %w", err)
	}
	regions := answer.Regions
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	entries := Select(regions, r.Zones, now().UTC(), r.Period)
	withTargets := len(entries)
	entries = Unpinged(entries, r.Unpinged, r.Zones, now().UTC(), r.Period)
	s := Summary{Upstream: len(regions), Stored: make([]string, 0, len(entries)), PingReport: answer.Report}
	for _, e := range entries {
		s.Stored = append(s.Stored, e.Region)
	}
	if s.Problems() {
		// Counts and the first problem only: the answer may be large, and
		// the token never appears in either.
		log.Warn("the Ping Service's answer held targets or regions we left out", report(s.PingReport)...)
	}
	if withTargets == 0 {
		// A valid empty answer means no region has servers: clients must not
		// keep pinging regions that cannot host a game.
		log.Warn("the Ping Service returned no usable regions; clearing the cache", "upstreamRegions", len(regions))
	}
	if s.Removed, err = r.Store.Replace(ctx, entries); err != nil {
		return s, fmt.Errorf("store ping targets: %w", err)
	}
	if r.Health != nil {
		// The regions we expect: the zone map's, or else what GameFabric
		// listed, those without targets included (they are cached nowhere,
		// but must still count as having no ping targets).
		var live, known []string
		for _, e := range entries {
			if len(e.Targets) > 0 {
				live = append(live, e.Region)
			}
		}
		for region := range regions {
			if len(r.Zones) == 0 && !slices.Contains(r.Unpinged, region) {
				known = append(known, region)
			}
		}
		for region := range r.Zones {
			if !slices.Contains(r.Unpinged, region) {
				known = append(known, region)
			}
		}
		if err := r.Health.RecordPing(ctx, live, known, now().UTC()); err != nil {
			log.Warn("recording region health from ping targets failed", "error", err)
		}
	}
	log.Info("ping cache refreshed", append([]any{"upstreamRegions", s.Upstream, "storedRegions", s.Stored, "removedRegions", s.Removed},
		report(s.PingReport)...)...)
	return s, nil
}

// report is a PingReport as log attributes.
func report(p gamefabric.PingReport) []any {
	return []any{"targetsDropped", p.TargetsDropped, "targetsOverLimit", p.TargetsOverLimit, "regionsOmitted", p.RegionsOmitted,
		"regionsSkipped", p.RegionsSkipped, "regionsOverLimit", p.RegionsOverLimit, "regionsMerged", p.RegionsMerged, "firstProblem", p.FirstProblem}
}

// fetch asks the Ping Service, re-reading the token once on a 401 (rotation).
func (r *Refresher) fetch(ctx context.Context) (gamefabric.Ping, error) {
	token, err := r.Tokens.Token(ctx)
	if err != nil {
		return gamefabric.Ping{}, err
	}
	answer, err := r.Source.Fetch(ctx, token)
	var gf *gamefabric.Error
	if errors.As(err, &gf) && gf.Status == 401 {
		if token, err = r.Tokens.Refresh(ctx, token); err != nil {
			return gamefabric.Ping{}, err
		}
		answer, err = r.Source.Fetch(ctx, token)
	}
	return answer, err
}
