package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// dueShard is what a run found in one shard of the health index.
type dueShard struct {
	ids     []string // the due instances taken on, oldest index key first
	pending []string // due instances found beyond what was asked so far
	cursor  string   // where the shard's listing continues
	end     bool     // the listing reached the shard's end
	open    bool     // it may hold more due instances
	err     error    // its query or read failed; the other shards went on
	// listed counts the instances listed; checked, those read to tell
	// whether they are due (the rest the watch cache knew).
	listed, checked int
}

// listPage is how many index entries one step of a shard's listing takes:
// one Query page, then reads of those the watch cache does not know.
const listPage = 1000

// firstShard is where a run's rotation starts: the run's minute modulo the
// shard count. It is derived from the run's time because the Lambda keeps no
// state between runs, and from the clock rather than chance so that
// consecutive runs of the default rate(1 minute) schedule start at
// consecutive shards and a test can choose the start with its clock.
// (A schedule of an even number of minutes visits every other start only;
// the start decides who gets the rounding remainder and goes first, not a
// shard's share, so that costs little.)
func firstShard(now time.Time, shards int) int {
	return int(now.Unix()/60) % shards
}

// rotated lists the shards from first round to first-1.
func rotated(first, shards int) []int {
	order := make([]int, shards)
	for k := range order {
		order[k] = (first + k) % shards
	}
	return order
}

// findDue takes up to capacity due instances, fairly: every round splits
// what capacity is left evenly over the shards that may hold more (the
// first ones in rotation order take the remainder), so the first round gives
// each shard capacity/shards and later rounds hand what the short shards
// did not use to the ones still full. A shard with a huge backlog therefore
// takes no more than its share while the others have due instances, and
// the loop ends after at most shards+1 rounds: each round either uses up
// the capacity or closes a shard (one that gave less than it was asked).
// The shards of a round are looked at concurrently, each by a goroutine of
// its own that alone touches its entry and its part of cache.
func (s *Service) findDue(ctx context.Context, now time.Time, first, shards, capacity int, cache *watchCache) []dueShard {
	found := make([]dueShard, shards)
	for i := range found {
		found[i].open = true
	}
	left := capacity
	for left > 0 && ctx.Err() == nil {
		var open []int
		for _, sh := range rotated(first, shards) {
			if found[sh].open {
				open = append(open, sh)
			}
		}
		if len(open) == 0 {
			break
		}
		share, extra := left/len(open), left%len(open)
		var wg sync.WaitGroup
		for k, sh := range open {
			ask := share
			if k < extra {
				ask++
			}
			if ask == 0 {
				continue
			}
			wg.Go(func() { s.takeDue(ctx, now, sh, &found[sh], ask, cache) })
		}
		wg.Wait()
		left = capacity
		for _, d := range found {
			left -= len(d.ids)
		}
	}
	return found
}

// takeDue adds up to ask of the shard's due instances to d.ids: those
// found before, then what its listing finds as it goes on.
func (s *Service) takeDue(ctx context.Context, now time.Time, shard int, d *dueShard, ask int, cache *watchCache) {
	cutOff := false
	for len(d.pending) < ask && !d.end && d.err == nil && !cutOff {
		entries, next, err := s.Store.Due(ctx, shard, now, listPage, d.cursor)
		due, readErr := s.dueAmong(ctx, now, shard, entries, cache, d)
		d.pending = append(d.pending, due...)
		switch err = errors.Join(err, readErr); {
		case err == nil:
			d.cursor, d.end = next, next == ""
		case ctx.Err() != nil:
			// Cut off by the run's deadline: not the shard's failure, and
			// it may hold more.
			cutOff = true
		default:
			d.err = fmt.Errorf("shard %02d: %w", shard, err)
		}
	}
	n := min(ask, len(d.pending))
	d.ids, d.pending = append(d.ids, d.pending[:n]...), d.pending[n:]
	d.open = cutOff || (d.err == nil && (!d.end || len(d.pending) > 0))
}

// dueAmong is which of the listed entries are due at now, in their order.
// An entry the watch cache knows cannot be overdue yet is not read; the
// others are read eventually consistently (Store.HealthOf), and a Linked
// instance that is not overdue is remembered until its deadline. Due is
// what Policy.Review would change (a record it could not decode too: the
// review reports it); the review reads it again before it writes.
func (s *Service) dueAmong(ctx context.Context, now time.Time, shard int, entries []gameinstance.IndexEntry, cache *watchCache, d *dueShard) ([]string, error) {
	d.listed += len(entries)
	var ids []string
	listed := make(map[string]gameinstance.IndexEntry, len(entries))
	for _, e := range entries {
		if !cache.known(shard, e, now) {
			ids, listed[e.ID] = append(ids, e.ID), e
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	recs, err := s.Store.HealthOf(ctx, ids)
	d.checked += len(recs)
	due := make(map[string]bool, len(recs))
	for _, rec := range recs {
		until, _ := s.Policy.Watch(rec, now)
		_, changed := s.Policy.Review(rec, now)
		switch e, ok := listed[rec.GameInstanceID]; {
		case !ok:
		case !until.IsZero():
			cache.remember(shard, e, until)
		case changed || rec.State == "":
			due[e.ID] = true
		}
	}
	var out []string
	for _, id := range ids {
		if due[id] {
			out = append(out, id)
		}
	}
	return out, err
}

// interleave orders the found instances round-robin over the shards,
// starting at first, each shard's oldest deadline first. Reviews are
// dispatched in this order, so a run that stops at its deadline has still
// reviewed about as many of every shard's due instances as of the others.
func interleave(found []dueShard, first int) []dueItem {
	var order []dueItem
	for depth := 0; ; depth++ {
		n := len(order)
		for _, sh := range rotated(first, len(found)) {
			if depth < len(found[sh].ids) {
				order = append(order, dueItem{id: found[sh].ids[depth], shard: sh})
			}
		}
		if len(order) == n {
			return order
		}
	}
}

type dueItem struct {
	id    string
	shard int
}

// budget is a run's time: dispatching stops at stopAt, before the
// context's deadline by margin = max(minMargin, a tenth of the time left),
// and in-flight reviews get a context that ends halfway through the margin,
// so the run returns before the Lambda's timeout even when DynamoDB hangs.
// Without a deadline the run is bounded by its capacity alone.
func budget(ctx context.Context, began time.Time, minMargin time.Duration) (stopAt time.Time, work context.Context, cancel context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		work, cancel = context.WithCancel(ctx)
		return time.Time{}, work, cancel
	}
	margin := max(minMargin, deadline.Sub(began)/10)
	work, cancel = context.WithDeadline(ctx, deadline.Add(-margin/2))
	return deadline.Add(-margin), work, cancel
}

// deadlineOnly: a context that ends at stopAt too (unless stopAt is zero).
func deadlineOnly(ctx context.Context, stopAt time.Time) (context.Context, context.CancelFunc) {
	if stopAt.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, stopAt)
}

// shardErrors joins the failed shard queries; all reports whether every
// shard failed, which is the one outage a run reports as an error.
func shardErrors(found []dueShard) (failed int, all bool, err error) {
	var errs []error
	for _, d := range found {
		if d.err != nil {
			errs = append(errs, d.err)
		}
	}
	return len(errs), len(errs) == len(found), errors.Join(errs...)
}
