package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// SweepLimit is the most due instances one run takes on, a hard cap under
// the time bound: it bounds the keys a run holds, the time it spends
// finding them (about 0.4 s for 10,000 on DynamoDB Local) and the writes one
// schedule period makes. With it a backlog of 20,000 takes two runs wherever
// a run reviews 10,000 before its stop, 186 a second over the 54 s a 60 s
// Lambda dispatches; DynamoDB Local on two cores does 280–860 a second, so
// there the cap binds and not the deadline (docs/benchmarks.md).
const SweepLimit = 10000

// SweepWorkers reviews run at once. A review is two DynamoDB round trips
// (strongly consistent read, conditional write) and little CPU, so a run is
// bound by latency: 16 in flight hide it without a burst of writes that
// could crowd allocations out of an on-demand table.
const SweepWorkers = 16

// SweepMinMargin: a run stops dispatching this long (or a tenth of its
// time, if more) before its context's deadline, the Lambda's timeout.
const SweepMinMargin = 5 * time.Second

// sweepLimits are a run's bounds; tests shrink them.
type sweepLimits struct {
	capacity  int
	workers   int
	minMargin time.Duration
}

var defaultSweepLimits = sweepLimits{capacity: SweepLimit, workers: SweepWorkers, minMargin: SweepMinMargin}

// SweepSummary is what one sweep did; it is the scheduled Lambda's result.
type SweepSummary struct {
	// Due counts the due instances this run took on (at most SweepLimit).
	Due              int `json:"due"`
	Marked           int `json:"marked"`
	LinkTimeouts     int `json:"linkTimeouts"`
	MissedHeartbeats int `json:"missedHeartbeats"`
	// OutcomesLost counts in-doubt claims failed because no server linked.
	OutcomesLost int `json:"outcomesLost"`
	// PlacementsTimedOut counts queued placements failed at their
	// deadline because no queue message did it first.
	PlacementsTimedOut int `json:"placementsTimedOut"`
	// Moved counts index entries that were early and were moved (a Linked
	// instance's never moves: its heartbeats are read instead).
	Moved int `json:"moved"`
	// Listed counts the instances the index listed (every live one whose
	// key has passed, as far as the run got); Checked, those it read to
	// tell whether they are due: the others, the warm function remembered
	// could not be overdue yet.
	Listed  int `json:"listed"`
	Checked int `json:"checked"`
	// Reviewed counts the due instances the run got to, failures included;
	// ReviewedByShard splits them by index shard.
	Reviewed        int   `json:"reviewed"`
	ReviewedByShard []int `json:"reviewedByShard"`
	// Failures counts reviews that failed (store error, undecodable record,
	// conflicts past the retries), each logged with its gameInstanceId; the
	// instance stays due, so a later run tries again.
	Failures int `json:"failures"`
	// ShardFailures counts index shards whose query failed; the others
	// were swept all the same.
	ShardFailures int `json:"shardFailures"`
	// Remaining counts due instances taken on but not reviewed because the
	// run reached its deadline (StoppedEarly); MoreDue says that shards held
	// more than the run took on. The next runs take both.
	Remaining    int  `json:"remaining"`
	StoppedEarly bool `json:"stoppedEarly"`
	MoreDue      bool `json:"moreDue"`
	// FirstShard is where this run's shard rotation started.
	FirstShard int `json:"firstShard"`
}

// Sweep reviews due instances (Policy.Review), each with a conditional
// write: fairly over the index shards, SweepWorkers at a time, until
// SweepLimit or shortly before ctx's deadline. One instance's failure is
// counted, not returned: the run fails only when every shard query failed,
// so the Lambda's Errors metric shows an outage and nothing less.
func (s *Service) Sweep(ctx context.Context) (SweepSummary, error) {
	return s.sweep(ctx, defaultSweepLimits)
}

func (s *Service) sweep(ctx context.Context, lim sweepLimits) (SweepSummary, error) {
	began := time.Now()
	log := logging.FromContext(ctx)
	now, shards := s.now(), s.Store.HealthShards()
	if shards < 1 {
		return SweepSummary{}, fmt.Errorf("the store has %d health shards", shards)
	}
	first := firstShard(now, shards)
	stopAt, work, cancel := budget(ctx, began, lim.minMargin)
	defer cancel()
	dispatch, cancelDispatch := deadlineOnly(work, stopAt)
	defer cancelDispatch()

	cache := s.takeWatch(shards)
	defer s.putWatch(cache)
	found := s.findDue(dispatch, now, first, shards, lim.capacity, cache)
	cutOff, findTook := dispatch.Err() != nil, time.Since(began)
	sum := SweepSummary{FirstShard: first, ReviewedByShard: make([]int, shards)}
	failedShards, allFailed, shardErr := shardErrors(found)
	sum.ShardFailures = failedShards
	for sh, d := range found {
		sum.Due += len(d.ids)
		sum.MoreDue = sum.MoreDue || d.open
		sum.Listed, sum.Checked = sum.Listed+d.listed, sum.Checked+d.checked
		if d.err != nil {
			log.Error("health sweep: looking at a shard failed", "error", d.err)
		}
		if d.end && d.err == nil {
			cache.forget(sh)
		}
	}
	order := interleave(found, first)
	dispatched := s.dispatch(work, dispatch, log, order, lim.workers, &sum)
	sum.Remaining = len(order) - dispatched
	sum.StoppedEarly = cutOff || sum.Remaining > 0
	log.Info("health sweep finished", "due", sum.Due, "reviewed", sum.Reviewed, "marked", sum.Marked, "linkTimeouts", sum.LinkTimeouts,
		"missedHeartbeats", sum.MissedHeartbeats, "outcomesLost", sum.OutcomesLost, "placementsTimedOut", sum.PlacementsTimedOut, "moved", sum.Moved, "listed", sum.Listed, "checked", sum.Checked, "failures", sum.Failures,
		"shardFailures", sum.ShardFailures, "remaining", sum.Remaining, "stoppedEarly", sum.StoppedEarly, "moreDue", sum.MoreDue,
		"firstShard", sum.FirstShard, "reviewedByShard", sum.ReviewedByShard, "findTook", findTook.Round(time.Millisecond), "took", time.Since(began).Round(time.Millisecond))
	if allFailed {
		return sum, fmt.Errorf("find due instances: %w", shardErr)
	}
	return sum, nil
}

// dispatch hands order to workers reviews at a time until it is done or the
// dispatch context ends, waits for the reviews in flight (under work) and
// adds their outcomes to sum. Each worker counts into its own tally, summed
// once all have finished, so the counters need no lock.
func (s *Service) dispatch(work, dispatch context.Context, log *slog.Logger, order []dueItem, workers int, sum *SweepSummary) (dispatched int) {
	jobs := make(chan dueItem)
	tallies := make([]SweepSummary, workers)
	var wg sync.WaitGroup
	for w := range tallies {
		tallies[w].ReviewedByShard = make([]int, len(sum.ReviewedByShard))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range jobs {
				s.sweepOne(work, log, it, &tallies[w])
			}
		}()
	}
send:
	for _, it := range order {
		if dispatch.Err() != nil {
			break
		}
		select {
		case jobs <- it:
			dispatched++
		case <-dispatch.Done():
			break send
		}
	}
	close(jobs)
	wg.Wait()
	for _, t := range tallies {
		sum.add(t)
	}
	return dispatched
}

// sweepOne reviews one due instance and counts the outcome in t, which
// belongs to the calling worker alone.
func (s *Service) sweepOne(ctx context.Context, log *slog.Logger, it dueItem, t *SweepSummary) {
	t.Reviewed++
	t.ReviewedByShard[it.shard]++
	rec, written, err := s.review(ctx, it.id)
	switch {
	case isNotFound(err):
		// Deleted since the index listed it: nothing is left to watch.
		log.Info("due game instance no longer exists", "gameInstanceId", it.id)
	case err != nil:
		t.Failures++
		log.Error("health sweep: reviewing a game instance failed; a later run retries it", "gameInstanceId", it.id, "error", err)
	case !written:
	case rec.Failure != nil && rec.Failure.Code == gameinstance.CodePlacementTimedOut:
		t.PlacementsTimedOut++
		log.Warn("queued placement timed out: no queue message failed it at its deadline", "gameInstanceId", it.id)
	case rec.State == gameinstance.StateFailed:
		t.OutcomesLost++
		log.Warn("in-doubt allocation failed: no game server linked back", "gameInstanceId", it.id,
			"leaseExpiresAt", rec.LeaseExpiresAt)
	case rec.State != gameinstance.StateUnhealthy:
		t.Moved++
	default:
		t.Marked++
		if rec.UnhealthyReason == gameinstance.ReasonLinkTimeout {
			t.LinkTimeouts++
			if s.Regions != nil && rec.Region != "" {
				s.Regions.LinkTimedOut(ctx, rec.Region)
			}
		} else {
			t.MissedHeartbeats++
		}
		log.Warn("game instance marked Unhealthy", "gameInstanceId", it.id, "reason", rec.UnhealthyReason,
			"linkedAt", rec.LinkedAt, "lastHeartbeatAt", rec.LastHeartbeatAt)
	}
}

// review applies Policy.Review to one instance. A panic on one record
// (say, one no code path foresaw) becomes that instance's failure instead of
// ending the run and starving every instance after it, run after run.
func (s *Service) review(ctx context.Context, id string) (rec gameinstance.Record, written bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			rec, written, err = gameinstance.Record{}, false, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return s.apply(ctx, id, nil, func(rec gameinstance.Record, now time.Time) (gameinstance.Record, bool, *gameinstance.RoomChange, error) {
		next, changed := s.Policy.Review(rec, now)
		return next, changed, nil, nil
	})
}

func isNotFound(err error) bool {
	var e *gameinstance.Error
	return errors.As(err, &e) && e.Code == gameinstance.CodeNotFound
}

// add sums a worker's tally into s.
func (s *SweepSummary) add(t SweepSummary) {
	s.Marked += t.Marked
	s.LinkTimeouts += t.LinkTimeouts
	s.MissedHeartbeats += t.MissedHeartbeats
	s.OutcomesLost += t.OutcomesLost
	s.PlacementsTimedOut += t.PlacementsTimedOut
	s.Moved += t.Moved
	s.Reviewed += t.Reviewed
	s.Failures += t.Failures
	for i, n := range t.ReviewedByShard {
		s.ReviewedByShard[i] += n
	}
}
