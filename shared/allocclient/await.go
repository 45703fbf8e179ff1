package allocclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Pacing of AllocateAndWait's polls. The service says when to look again
// (Retry-After); the bounds keep a missing or odd answer from turning the
// wait into a busy loop or a stall.
const (
	minPollWait     = time.Second
	maxPollWait     = 15 * time.Second // the queue worker's longest delay between attempts
	defaultPollWait = 2 * time.Second
	// maxQueueTimeout is the service's bound on queueTimeoutSeconds.
	maxQueueTimeout = 600 * time.Second
	// maxPolls ends a wait the service never ends: the longest queue at
	// the shortest wait, plus a minute of polls for the Failed write that
	// closes a queue at its deadline (the worker's or the health sweep's).
	maxPolls = int(maxQueueTimeout/minPollWait) + 60
)

// ErrStillPending: AllocateAndWait polled more times than any queue timeout
// needs and the placement was still Queued or Allocating. The service
// broke its deadline; End cancels the placement.
var ErrStillPending = errors.New("allocclient: the placement is still pending after more polls than any queue timeout needs")

// AllocateAndWait allocates like Allocate (the same retries) and, while the
// placement is Queued (or Allocating: the queue worker is asking a region),
// Gets it again after the answer's Retry-After — at least 1 s, at most 15 s,
// 2 s when the answer named none — until it is settled:
//
//   - placed (Allocated, or already Linked) → the allocation, nil;
//   - Failed → the record and an *Error with its error's code and message
//     (CodePlacementTimedOut, CodePlacementCancelled, CodeNoCapacity, …),
//     so IsCode works as for an error answer;
//   - ctx ends, a Get fails after its retries, or ErrStillPending → the
//     last allocation seen and the error (which wraps ctx's when it ended).
//
// The placement outlives an ended ctx: the service keeps trying until
// QueuedUntil, and End cancels it. Queueing needs r.QueueTimeoutSeconds or
// the deployment's QUEUE_TIMEOUT; without either a placement with no
// capacity fails as it does for Allocate.
func (c *Client) AllocateAndWait(ctx context.Context, r AllocateRequest) (*Allocation, error) {
	a, retryAfterGiven, err := c.allocate(ctx, r)
	if err != nil {
		return nil, err
	}
	op := "POST /v1/allocations"
	for polls := 0; a.State == StateQueued || a.State == StateAllocating; polls++ {
		if polls == maxPolls {
			return a, fmt.Errorf("%w (%d polls, still %s)", ErrStillPending, polls, a.State)
		}
		if err := c.sleep(ctx, pollWait(a, retryAfterGiven)); err != nil {
			return a, fmt.Errorf("allocclient: wait for the %s placement: %w", a.State, err)
		}
		next, nextGiven, err := c.instance(ctx, http.MethodGet, r.GameInstanceID)
		if err != nil {
			return a, err
		}
		a, retryAfterGiven, op = next, nextGiven, "GET /v1/allocations/{gameInstanceId}"
	}
	if a.State == StateFailed {
		return a, failedPlacement(a, op)
	}
	return a, nil
}

// pollWait is how long to wait before looking at a pending a again;
// retryAfterGiven: its answer named a Retry-After (a.RetryAfter).
func pollWait(a *Allocation, retryAfterGiven bool) time.Duration {
	if !retryAfterGiven {
		return defaultPollWait
	}
	return min(max(a.RetryAfter, minPollWait), maxPollWait)
}

// failedPlacement is a Failed record as an *Error, the way an error answer
// with its code would be: the code is what callers branch on.
func failedPlacement(a *Allocation, op string) *Error {
	e := &Error{Status: http.StatusOK, Allocation: a, op: op}
	if a.Error != nil {
		e.Code, e.Message = string(a.Error.Code), a.Error.Message
	}
	return e
}
