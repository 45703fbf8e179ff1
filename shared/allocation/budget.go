package allocation

import (
	"context"
	"time"
)

// The time one allocation may take is measured from the invocation's start
// and must leave API Gateway's 30 s integration timeout (which also counts
// the cold start and the gateway's own hop) with margin: past it the caller
// gets a bare 503 with no code and the outcome write may be cut off. The
// budget's tail is kept for recording the outcome.
const (
	// OutcomeReserve is kept for the outcome write: its SDK retries (see
	// store.outcomeWrite) fit in it.
	OutcomeReserve = 3 * time.Second
	// confirmReserve follows it, to read back an outcome whose write
	// failed: it may have been saved with only its reply lost.
	confirmReserve = 500 * time.Millisecond
	// responseMargin is left before the Lambda's own deadline for the
	// answer to be written out.
	responseMargin = 500 * time.Millisecond
	// leaseMargin keeps upstream work well inside the claim's lease, so a
	// live invocation never has its claim taken over.
	leaseMargin = 5 * time.Second
	// healthTimeout bounds the region-health reads before the attempts and
	// the writes after the outcome: health is advisory, never worth a
	// caller's wait.
	healthTimeout = time.Second
	minAttempt    = 50 * time.Millisecond
)

// budget is one allocation's deadlines.
type budget struct {
	// upstream ends the claim, token reads and refreshes, attempts and
	// their backoff.
	upstream time.Time
	// record ends the outcome write; end ends reading it back, and the
	// answer is due.
	record, end time.Time
	// start is when the allocation began (for its latency metric).
	start time.Time
}

// wallNow is the clock of deadlines and durations. It is the wall clock,
// not Options.Now: the record's clock may be a test's, but deadlines
// become context deadlines, which run on real time.
func wallNow() time.Time { return time.Now() }

// wallUntil is how long until deadline, on the wall clock.
func wallUntil(deadline time.Time) time.Duration { return deadline.Sub(wallNow()) }

// budgetFor starts the allocation's clock now.
func (s *Service) budgetFor(ctx context.Context) budget {
	start := wallNow()
	end := start.Add(s.o.Budget)
	if d, ok := ctx.Deadline(); ok && d.Add(-responseMargin).Before(end) {
		end = d.Add(-responseMargin)
	}
	b := budget{start: start, end: end, record: end.Add(-confirmReserve)}
	b.upstream = b.record.Add(-OutcomeReserve)
	if lease := start.Add(s.o.Lease - min(leaseMargin, s.o.Lease/4)); lease.Before(b.upstream) {
		b.upstream = lease
	}
	return b
}

// detached bounds a context to at most d from now and to deadline; d = 0
// means only the deadline. It keeps ctx's values but not its cancellation:
// the outcome write must finish even if the caller has gone away, because
// the upstream allocation happened and a replay must find it.
func detached(ctx context.Context, deadline time.Time, d time.Duration) (context.Context, context.CancelFunc) {
	if soon := wallNow().Add(d); d > 0 && soon.Before(deadline) {
		deadline = soon
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}
