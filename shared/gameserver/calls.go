package gameserver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// Link tells the backend the server is up: Allocated → Linked. Call it
// once the server can take players, before letting them in. Linking a
// Linked instance again changes nothing.
//
// GameFabric calls the server back during the allocate call, so a fast
// server can link before the backend has recorded its allocation: 409
// ALLOCATION_IN_PROGRESS, 429, 5xx (other than INTERNAL) and transport
// failures are retried with backoff, honouring Retry-After, for
// Options.LinkPatience. Anything else (401 UNAUTHORIZED, 409
// INVALID_STATE, 400 INVALID_REQUEST ...) fails at once with an *APIError.
//
// A room offer (r.Rooms) is checked first (RoomOffer.Validate): a bad one
// fails without a call.
func (c *Client) Link(ctx context.Context, r LinkRequest) (*Instance, error) {
	var secret string
	if r.Rooms != nil {
		if err := r.Rooms.Validate(); err != nil {
			return nil, fmt.Errorf("gameserver: link: %w", err)
		}
		secret = r.Rooms.CallbackToken
	}
	return c.retry(ctx, "link", c.linkPatience, func(ctx context.Context) (*Instance, error) {
		return c.call(ctx, "link", r, secret)
	})
}

// Heartbeat makes one heartbeat call and answers the instance's state:
// Ended (the backend ended it) or Unhealthy mean the server should shut
// down. It is not retried; RunHeartbeats is the loop.
func (c *Client) Heartbeat(ctx context.Context) (*Instance, error) {
	return c.call(ctx, "heartbeat", nil)
}

// HeartbeatSessions is Heartbeat for a server hosting rooms: with this
// session's token it renews every session holding a room on the server in
// one call, and the answer lists the others (Instance.Sessions), so one
// loop serves them all. A session without a room is heartbeaten alone.
func (c *Client) HeartbeatSessions(ctx context.Context) (*Instance, error) {
	return c.call(ctx, "heartbeat", struct {
		AllSessions bool `json:"allSessions"`
	}{true})
}

// MaxReasonLength is the longest end reason the backend accepts.
const MaxReasonLength = 255

// End records that the game is over (Allocated, Linked or Unhealthy →
// Ended) with reason, e.g. "IWON" or "MaxGameLength" (may be ""). Ending
// an Ended instance answers it unchanged, so End is safe to repeat, and
// transient failures are retried for Options.EndPatience.
//
// Stop heartbeating first. On shutdown ctx must still be live: derive it
// with context.WithoutCancel from a cancelled one.
func (c *Client) End(ctx context.Context, reason string) (*Instance, error) {
	if len(reason) > MaxReasonLength {
		return nil, fmt.Errorf("gameserver: end: reason must be at most %d bytes", MaxReasonLength)
	}
	var body any
	if reason != "" {
		body = struct {
			Reason string `json:"reason"`
		}{reason}
	}
	return c.retry(ctx, "end", c.endPatience, func(ctx context.Context) (*Instance, error) {
		return c.call(ctx, "end", body)
	})
}

// Backoff between tries: doubling from backoffMin to backoffMax,
// jittered down to half, so servers started together do not retry in
// lockstep.
const (
	backoffMin = 250 * time.Millisecond
	backoffMax = 4 * time.Second
)

// retry calls fn until it succeeds, fails for good, ctx ends, or patience
// has passed. The last failure is wrapped, so errors.As
// still finds its *APIError.
func (c *Client) retry(ctx context.Context, op string, patience time.Duration, fn func(context.Context) (*Instance, error)) (*Instance, error) {
	deadline := time.Now().Add(patience)
	for attempt := 0; ; attempt++ {
		inst, err := fn(ctx)
		if err == nil || !retryable(ctx, err) {
			if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
				err = fmt.Errorf("%w (last: %w)", ctx.Err(), err)
			}
			return inst, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("gameserver: %s: gave up after %s: %w", op, patience, err)
		}
		// The last try is at the deadline, not a backoff short of it.
		pause := min(c.pause(attempt, err), left)
		c.log.Warn("game-server call failed; retrying", "call", op, "error", err, "retryIn", pause.Round(time.Millisecond))
		if werr := wait.Sleep(ctx, pause); werr != nil {
			return nil, fmt.Errorf("%w (last: %w)", werr, err)
		}
	}
}

// pause is the wait before try attempt+1: the backoff, or the answer's
// Retry-After when longer, capped at maxWait.
func (c *Client) pause(attempt int, err error) time.Duration {
	d := min(backoffMin<<min(attempt, 10), backoffMax)
	d = d/2 + rand.N(d/2+1)
	var api *APIError
	if errors.As(err, &api) && api.RetryAfter > d {
		d = api.RetryAfter
	}
	return min(d, c.maxWait)
}
