// Package asyncinvoke is Lambda's asynchronous invocation, locally, as an
// EventBridge rule's function target gets it. The rule delivers to an SQS
// queue in moto standing for Lambda's own event queue; a Poller takes each
// event from it and Deliver invokes the function with the event as its
// payload. On a function error (or a timeout or crash) the function is
// invoked again, up to the function's EventInvokeConfig
// MaximumRetryAttempts times, after short delays (Lambda waits about a
// minute, then two); an event that still fails, or would outlive
// MaximumEventAge, is sent to the on-failure destination as Lambda's
// invocation record, with the event as its requestPayload.
package asyncinvoke

import (
	"context"
	"log/slog"
	"time"
)

// Invoker runs the function once, synchronously, with event and returns
// its response payload. Any error is a failed invocation; with a function
// error the payload is the function's error document.
type Invoker interface {
	Invoke(ctx context.Context, event []byte) ([]byte, error)
}

// Destination receives on-failure records (an SQS queue in Lambda).
type Destination interface {
	Send(ctx context.Context, body string) error
}

// Conditions of an on-failure record: why Lambda gave up on the event.
const (
	RetriesExhausted = "RetriesExhausted"
	EventAgeExceeded = "EventAgeExceeded"
)

// MaxRetryAttempts is the most EventInvokeConfig allows.
const MaxRetryAttempts = 2

// Config is how one function's asynchronous invocations are handled.
type Config struct {
	Function    string // its name, for logs
	FunctionARN string // requestContext.functionArn of the records
	// MaximumRetryAttempts after the first invocation fails: 0 to 2.
	MaximumRetryAttempts int
	// MaximumEventAge drops an event this old instead of retrying it
	// (EventAgeExceeded); 0 is no limit.
	MaximumEventAge time.Duration
	// RetryDelay is the wait before the first retry, doubled before each
	// next; default 200 ms (Lambda's are minutes, too slow to watch).
	RetryDelay time.Duration
	// OnFailure receives the records of events given up on; nil drops
	// them (logged), as Lambda does without a destination.
	OnFailure Destination
	// Done, when set, hears what became of every event.
	Done func(Outcome)
	Log  *slog.Logger
}

// Outcome is what became of one event.
type Outcome struct {
	Invocations int
	// Err is the last invocation's error; nil when one succeeded.
	Err error
	// Condition is "" when an invocation succeeded (or delivery stopped
	// with its context), else why the event was given up on.
	Condition string
	// Record is the on-failure record of an event given up on, and
	// SendErr why sending it to OnFailure failed.
	Record  []byte
	SendErr error
}

func withDefaults(cfg Config) Config {
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = 200 * time.Millisecond
	}
	cfg.MaximumRetryAttempts = min(max(cfg.MaximumRetryAttempts, 0), MaxRetryAttempts)
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Deliver handles one event Lambda accepted at received: invocations until
// one succeeds, at most 1 + MaximumRetryAttempts, then the on-failure
// record. A ctx that ends stops it where it is, with no record (the local
// stack is stopping).
func Deliver(ctx context.Context, cfg Config, fn Invoker, event []byte, received time.Time) Outcome {
	cfg = withDefaults(cfg)
	var out Outcome
	var payload []byte
	delay := cfg.RetryDelay
	for out.Invocations <= cfg.MaximumRetryAttempts {
		payload, out.Err = fn.Invoke(ctx, event)
		out.Invocations++
		if out.Err == nil || ctx.Err() != nil {
			return done(cfg, out)
		}
		if out.Invocations > cfg.MaximumRetryAttempts {
			break
		}
		if cfg.MaximumEventAge > 0 && time.Since(received)+delay > cfg.MaximumEventAge {
			out.Condition = EventAgeExceeded
			break
		}
		cfg.Log.Info("asyncinvoke: the function failed; the event is retried", "function", cfg.Function,
			"invocation", out.Invocations, "retryIn", delay, "error", out.Err)
		if !sleep(ctx, delay) {
			return done(cfg, out)
		}
		delay *= 2
	}
	if out.Condition == "" {
		out.Condition = RetriesExhausted
	}
	out.Record = Record(cfg.FunctionARN, out.Condition, out.Invocations, event, payload, out.Err, time.Now())
	if cfg.OnFailure == nil {
		cfg.Log.Warn("asyncinvoke: event given up on and dropped (no on-failure destination)", "function", cfg.Function,
			"condition", out.Condition, "invocations", out.Invocations, "error", out.Err)
		return done(cfg, out)
	}
	// Sent even as the stack stops: the event was given up on already.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	out.SendErr = cfg.OnFailure.Send(sctx, string(out.Record))
	cfg.Log.Warn("asyncinvoke: event given up on, sent to the on-failure destination", "function", cfg.Function,
		"condition", out.Condition, "invocations", out.Invocations, "error", out.Err, "sendError", out.SendErr)
	return done(cfg, out)
}

func done(cfg Config, out Outcome) Outcome {
	if cfg.Done != nil {
		cfg.Done(out)
	}
	return out
}

// sleep waits d, false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
