package gameserver

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// HeartbeatOptions tune the heartbeat loop.
type HeartbeatOptions struct {
	// Interval between heartbeats. By default, the interval the backend's
	// last answer named (heartbeatIntervalSeconds, between 1 s and 10
	// min): HEALTH_PERIOD behind the function URL, a third of it behind
	// the HTTP API; before any answer, a third of HealthPeriod. The
	// backend marks an instance Unhealthy when no heartbeat was recorded
	// for HEALTH_PERIOD × HEALTH_FAILURE_THRESHOLD (90 s by default) and
	// records one at most once per HEALTH_PERIOD, so one lost heartbeat
	// never costs the game. Behind the function URL a heartbeat costs a
	// Lambda request and at most a write; docs/benchmarks.md prices a
	// 20-minute game at each interval.
	Interval time.Duration
	// OnHeartbeat, when set, hears every answered heartbeat, on the
	// loop's goroutine; it must not block.
	OnHeartbeat func(*Instance)
	// AllSessions: each heartbeat renews every session holding a room on
	// this server (HeartbeatSessions), and OnHeartbeat hears the others'
	// states in Instance.Sessions. A rooms server then runs one loop, on
	// any live session's client, instead of one per session.
	AllSessions bool
}

// minCallTimeout: one heartbeat may take this long even when the interval
// is shorter (a cold Lambda), so a short interval does not starve it.
const minCallTimeout = 5 * time.Second

// RunHeartbeats heartbeats every interval until:
//   - the backend answers Ended or Unhealthy: an error wrapping ErrEnded
//     or ErrUnhealthy (errors.Is), naming the reason;
//   - a call is refused for good (401 UNAUTHORIZED, 409 INVALID_STATE
//     before a link ...): that *APIError;
//   - ctx ends: ctx's error.
//
// Transient failures (transport, 429, 5xx) are logged and the loop goes
// on: the backend tolerates missed heartbeats for HEALTH_FAILURE_THRESHOLD
// periods, and once it has given up the next answer says Unhealthy. A
// Retry-After longer than the interval (at most HealthPeriod) delays the
// next try. It runs on the caller's goroutine and starts none that
// outlive it.
func (c *Client) RunHeartbeats(ctx context.Context, o HeartbeatOptions) error {
	interval := c.heartbeatInterval(o)
	t := time.NewTimer(interval)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		callCtx, cancel := context.WithTimeout(ctx, max(interval, minCallTimeout))
		beat := c.Heartbeat
		if o.AllSessions {
			beat = c.HeartbeatSessions
		}
		inst, err := beat(callCtx)
		cancel()
		interval = c.heartbeatInterval(o)
		next := interval
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			if failures > 0 {
				c.log.Info("heartbeats answered again", "failedBefore", failures)
			}
			failures = 0
			if o.OnHeartbeat != nil {
				o.OnHeartbeat(inst)
			}
			if err := over(inst); err != nil {
				return err
			}
		case retryable(ctx, err):
			failures++
			var api *APIError
			if errors.As(err, &api) && api.RetryAfter > interval {
				next = min(api.RetryAfter, c.healthPeriod)
			}
			c.log.Warn("heartbeat failed; trying again", "error", err, "consecutiveFailures", failures, "retryIn", next)
		default:
			return err
		}
		t.Reset(next)
	}
}

// heartbeatInterval is o.Interval, else the backend's advice, else a
// third of HealthPeriod.
func (c *Client) heartbeatInterval(o HeartbeatOptions) time.Duration {
	switch advised := time.Duration(c.advised.Load()); {
	case o.Interval > 0:
		return o.Interval
	case advised > 0:
		return advised
	}
	return c.healthPeriod / 3
}

// over is the error for an instance that is over, nil for one that is not.
func over(inst *Instance) error {
	var reason string
	var sentinel error
	switch inst.State {
	case StateEnded:
		reason, sentinel = inst.EndReason, ErrEnded
	case StateUnhealthy:
		reason, sentinel = inst.UnhealthyReason, ErrUnhealthy
	default:
		return nil
	}
	if reason != "" {
		reason = " (reason " + reason + ")"
	}
	return fmt.Errorf("gameserver: heartbeat answered %s%s: %w", inst.State, reason, sentinel)
}

// Heartbeater runs RunHeartbeats on a goroutine of its own, for servers
// that select on its end alongside their game.
type Heartbeater struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done closes
}

// StartHeartbeats starts the loop. Stop (or ending ctx) stops it; either
// way call Stop, which waits for the goroutine.
func (c *Client) StartHeartbeats(ctx context.Context, o HeartbeatOptions) *Heartbeater {
	ctx, cancel := context.WithCancel(ctx)
	h := &Heartbeater{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		err := c.RunHeartbeats(ctx, o)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = nil // stopped on request: not a failure
		}
		h.err = err
	}()
	return h
}

// Done closes when the loop has stopped.
func (h *Heartbeater) Done() <-chan struct{} { return h.done }

// Err is why the loop stopped, once Done is closed: an error wrapping
// ErrEnded or ErrUnhealthy, a final *APIError, or nil when it was stopped
// (Stop, or the context ending).
func (h *Heartbeater) Err() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// Stop stops the loop, waits until its goroutine has returned, and
// returns Err. It may be called more than once.
func (h *Heartbeater) Stop() error {
	h.cancel()
	<-h.done
	return h.err
}
