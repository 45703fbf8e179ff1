package allocation

import (
	"context"
	"errors"
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Resume runs a queued placement's next attempt (the queue worker, one
// message). Messages may come twice, late or stale: the record decides.
// Only the copy whose ticket the Queued record holds runs, and only after
// claiming the record from Queued, so a DELETE that cancelled the
// placement first leaves it untouched, and one that comes after meets a
// claim and is told to retry. nil: the message is done with (placed,
// failed, queued again under a new message, or stale); an error: deliver
// it again.
func (s *Service) Resume(ctx context.Context, m QueuedPlacement) error {
	b := s.budgetFor(ctx)
	log := logging.FromContext(ctx).With("gameInstanceId", m.GameInstanceID)
	spec, err := s.o.Defaults.resolve(m.Request, m.origin())
	if err != nil || spec.GameInstanceID != m.GameInstanceID {
		log.Error("placement message dropped: it does not hold a valid allocation request for its game instance", "error", err)
		return nil
	}
	uctx, cancel := context.WithDeadline(ctx, b.upstream)
	defer cancel()
	rec, err := s.o.Store.Get(uctx, m.GameInstanceID)
	switch {
	case errors.Is(err, gameinstance.ErrNotFound):
		log.Warn("placement message dropped: no record for its game instance")
		return nil
	case err != nil:
		return fmt.Errorf("read the queued placement: %w", err)
	case !queuedUnder(rec, m.Ticket):
		log.Debug("placement message done with: the placement moved on", "state", rec.State)
		return nil
	case rec.Fingerprint != spec.Fingerprint:
		log.Error("placement message dropped: its request is not the one queued")
		return nil
	}
	if !s.o.Now().Before(rec.Queue.Until) {
		return s.timeOut(ctx, b, rec, spec, m.Ticket)
	}
	spec = spec.at(s.o.Now().Sub(rec.Queue.StartedAt))
	creds, err := s.readCredentials(uctx, spec.Plan)
	if err != nil {
		return err
	}
	claim, tokens, err := s.resumeClaim(rec, spec)
	if err != nil {
		return err
	}
	if mine, err := s.takeQueued(uctx, claim, m.Ticket); !mine || err != nil {
		return err
	}
	run := s.runPlan(uctx, b, claim, spec, creds, tokens)
	q := *rec.Queue
	if delay, ok := s.waits(spec, q, run); ok {
		if _, queued, err := s.requeue(ctx, b, claim, run, m, q, delay); queued {
			return err
		}
		// The queue is down: keep this message, which SQS delivers again
		// after its visibility timeout, and its ticket.
		q.NextAt = s.o.Now().Add(maxQueueDelay)
		if _, err := s.recordQueued(ctx, b, claim, run, q); err != nil {
			return err
		}
		return errors.New("the placement queue is unavailable; this message is delivered again")
	}
	if run.short(spec) && s.o.Now().Add(minQueueDelay).After(q.Until) {
		run.timedOut = true
	}
	_, _, err = s.settle(ctx, b, claim, run)
	return err
}

// short: run placed nothing and found nothing but the lack of capacity a
// queued placement waits out (or every region was over the latency cap).
func (run planRun) short(spec Spec) bool {
	if run.server != nil || run.abort != nil {
		return false
	}
	if len(spec.Plan) == 0 {
		return true
	}
	code := failureCode(run.attempts)
	return code == gameinstance.CodeNoCapacity || code == gameinstance.CodeRateLimited
}

// timeOut fails a placement whose deadline passed before its message
// ran: no attempt, PLACEMENT_TIMED_OUT.
func (s *Service) timeOut(ctx context.Context, b budget, rec gameinstance.Record, spec Spec, ticket string) error {
	claim, _, err := s.resumeClaim(rec, spec)
	if err != nil {
		return err
	}
	wctx, cancel := detached(ctx, b.record, 0)
	defer cancel()
	if mine, err := s.takeQueued(wctx, claim, ticket); !mine || err != nil {
		return err
	}
	_, _, err = s.settle(ctx, b, claim, planRun{timedOut: true, known: map[string]bool{}})
	return err
}

// resumeClaim is the claim of a queued placement's next attempt: a fresh
// claim (id, lease, link-back tokens) that keeps the placement's
// schedule, its attempts so far and when it was created.
func (s *Service) resumeClaim(rec gameinstance.Record, spec Spec) (gameinstance.Record, [][]string, error) {
	claim, tokens, err := s.newClaim(spec)
	if err != nil {
		return gameinstance.Record{}, nil, err
	}
	claim.Queue, claim.Attempts, claim.CreatedAt = rec.Queue, rec.Attempts, rec.CreatedAt
	// The health index keeps the placement's deadline: the sweep looks at
	// the claim then, and moves an in-doubt one on to lease + LINK_TIMEOUT
	// as for any claim. Left as it is, the key is not rewritten by the
	// claim nor by the run's Queued write: two index writes less per run.
	claim.HealthDeadline = rec.Queue.Until
	return claim, tokens, nil
}

// takeQueued claims the placement from Queued under ticket. mine is false
// when something else moved it first (another copy of the message, a
// DELETE, the health sweep): the message is done with. A claim whose reply
// was lost is read back.
func (s *Service) takeQueued(ctx context.Context, claim gameinstance.Record, ticket string) (mine bool, err error) {
	err = s.o.Store.Resume(ctx, claim, ticket)
	var conflict *gameinstance.ClaimConflictError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &conflict), errors.Is(err, gameinstance.ErrNotFound):
		return false, nil
	}
	got, gerr := s.o.Store.Get(ctx, claim.GameInstanceID)
	if gerr != nil {
		return false, fmt.Errorf("claim the queued placement: %w", err)
	}
	return got.ClaimedBy(claim.ClaimID), nil
}
