package allocation

import (
	"context"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Queue is the placement queue (SQS, behind shared/placementqueue): each
// message runs one queued placement's next attempt.
type Queue interface {
	// Enqueue sends m, to be delivered after delay.
	Enqueue(ctx context.Context, m QueuedPlacement, delay time.Duration) error
}

// QueuedPlacement is one queue message. It carries the request itself,
// tokens included: the record keeps only their hashes, and the next
// attempt must send the caller's tokens to the game server.
type QueuedPlacement struct {
	GameInstanceID string `json:"gameInstanceId"`
	// Ticket must be the record's Queue.Ticket for the message to run; a
	// copy with another ticket is stale.
	Ticket  string  `json:"ticket"`
	Request Request `json:"request"`
	// Match: the request is a FlexMatch match's (Service.AllocateMatch);
	// the request's own JSON cannot say so, as an API caller cannot.
	Match bool `json:"match,omitempty"`
	// GameSession: the request is a GameLift placement's
	// (Service.AllocateGameSession), with what its game server is told.
	GameSession *GameSessionPlacement `json:"gameSession,omitempty"`
}

// How long a queued placement waits between attempts: the Allocators'
// Retry-After or a backoff growing with the wait, within these bounds and
// never past the deadline (SQS delays messages by at most 15 minutes; a
// placement waits at most 10).
const (
	minQueueDelay = time.Second
	maxQueueDelay = 15 * time.Second
	// enqueueTimeout bounds sending the message, out of the outcome
	// write's reserve.
	enqueueTimeout = time.Second
)

// waits reports whether the placement waits for its next attempt after
// run, and how long: it may queue (a queue timeout, a queue), nothing was
// placed, every region asked had only no capacity or a rate limit (or
// every region was over the latency cap), and a whole delay is left
// before the deadline.
func (s *Service) waits(spec Spec, q gameinstance.Queue, run planRun) (time.Duration, bool) {
	if spec.QueueTimeout <= 0 || s.o.Queue == nil || !run.short(spec) {
		return 0, false
	}
	now := s.o.Now()
	left := q.Until.Sub(now)
	if left < minQueueDelay {
		return 0, false
	}
	elapsed := now.Sub(q.StartedAt)
	delay := elapsed / 4
	if upstream := longestRetryAfter(run.attempts); upstream > 0 {
		delay = upstream
	}
	_, relaxesIn := capAt(spec.routes.policies, elapsed)
	switch {
	case len(spec.Plan) == 0 && relaxesIn == 0:
		// Every region is over a cap that holds until the deadline: only
		// the deadline is left to wait for, a message per longest delay.
		delay = maxQueueDelay
	case len(spec.Plan) == 0, relaxesIn > 0 && relaxesIn < delay:
		delay = relaxesIn // a region may come under the cap then
	}
	return min(max(delay, minQueueDelay), maxQueueDelay, left), true
}

// requeue sends the next attempt's message, then records the placement
// Queued under that message's ticket: a caller is answered 202 only for a
// placement a message will retry. queued is false, with nothing written,
// when the message could not be sent.
func (s *Service) requeue(ctx context.Context, b budget, rec gameinstance.Record, run planRun, m QueuedPlacement, q gameinstance.Queue, delay time.Duration) (res Result, queued bool, err error) {
	ticket, err := mintToken(s.o.Random)
	if err != nil {
		return Result{}, false, nil
	}
	m.Ticket = ticket
	qctx, cancel := detached(ctx, b.record, enqueueTimeout)
	err = s.o.Queue.Enqueue(qctx, m, delay)
	cancel()
	if err != nil {
		logging.FromContext(ctx).Error("the placement queue is unavailable; the placement cannot wait", "gameInstanceId", rec.GameInstanceID, "error", err)
		return Result{}, false, nil
	}
	q.Ticket, q.NextAt = ticket, s.o.Now().Add(delay)
	stored, err := s.recordQueued(ctx, b, rec, run, q)
	if err != nil {
		return Result{}, true, err
	}
	return Result{Record: stored, Created: true}, true, nil
}

// recordQueued writes the claim rec back as Queued under q, with run's
// attempts. Metrics wait for the placement's outcome.
func (s *Service) recordQueued(ctx context.Context, b budget, rec gameinstance.Record, run planRun, q gameinstance.Queue) (gameinstance.Record, error) {
	rec.Attempts, rec.CandidateTokenHashes = run.after(rec.Attempts), nil
	rec.State, rec.Queue, rec.UpdatedAt = gameinstance.StateQueued, &q, s.o.Now()
	// The health sweep fails the placement at its deadline if no message
	// does (a message lost, or the queue down).
	rec.HealthDeadline, rec.ExpiresAt = q.Until, q.Until.Add(s.o.Retention)
	stored, err := s.record(ctx, b, rec)
	s.observe(ctx, b, run)
	return stored, err
}

// queuedUnder reports whether rec is a placement waiting for the message
// with ticket.
func queuedUnder(rec gameinstance.Record, ticket string) bool {
	return rec.State == gameinstance.StateQueued && rec.Queue != nil && rec.Queue.Ticket == ticket
}

// at is spec re-planned elapsed after the first attempt.
func (spec Spec) at(elapsed time.Duration) Spec {
	if spec.routes.max > 0 {
		spec.Plan, spec.Cap, _ = spec.routes.at(elapsed)
	}
	return spec
}
