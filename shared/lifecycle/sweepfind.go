package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// dueShard is what a run found in one shard of the health index.
type dueShard struct {
	ids    []string
	cursor string // where the shard's next query continues
	open   bool   // it may hold more due instances
	err    error  // its query failed; the other shards went on
}

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
// The shards of a round are queried concurrently.
func (s *Service) findDue(ctx context.Context, now time.Time, first, shards, capacity int) []dueShard {
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
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each goroutine touches only its own shard's entry.
				d := &found[sh]
				ids, next, err := s.Store.Due(ctx, sh, now, ask, d.cursor)
				d.ids, d.cursor = append(d.ids, ids...), next
				switch {
				case err == nil:
					d.open = next != "" && len(ids) == ask
				case ctx.Err() != nil:
					// Cut off by the run's deadline: not the shard's
					// failure, and it may hold more.
				default:
					d.open, d.err = false, fmt.Errorf("shard %02d: %w", sh, err)
				}
			}()
		}
		wg.Wait()
		left = capacity
		for _, d := range found {
			left -= len(d.ids)
		}
	}
	return found
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
