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

	"github.com/gamefabric-alloc/allocsvc/local/internal/esm"
)

// Invoker runs the function; with a function error the payload is the
// function's error document.
type Invoker = esm.Invoker

// Destination receives on-failure records (an SQS queue in Lambda).
type Destination = esm.Destination

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

// Deliver handles one event Lambda accepted at received: invocations until
// one succeeds, at most 1 + MaximumRetryAttempts, then the on-failure
// record. A ctx that ends stops it where it is, with no record (the local
// stack is stopping).
func Deliver(ctx context.Context, cfg Config, fn Invoker, event []byte, received time.Time) Outcome {
	cfg.RetryDelay = esm.Or(cfg.RetryDelay, 200*time.Millisecond)
	cfg.MaximumRetryAttempts = min(max(cfg.MaximumRetryAttempts, 0), MaxRetryAttempts)
	cfg.Log = esm.Logger(cfg.Log, "function", cfg.Function)
	out := deliver(ctx, cfg, fn, event, received)
	if cfg.Done != nil {
		cfg.Done(out)
	}
	return out
}

func deliver(ctx context.Context, cfg Config, fn Invoker, event []byte, received time.Time) (out Outcome) {
	var payload []byte
	for delay := cfg.RetryDelay; ; delay *= 2 {
		payload, out.Err = fn.Invoke(ctx, event)
		out.Invocations++
		if out.Err == nil || ctx.Err() != nil {
			return out
		}
		if out.Invocations > cfg.MaximumRetryAttempts {
			out.Condition = RetriesExhausted
			break
		}
		if cfg.MaximumEventAge > 0 && time.Since(received)+delay > cfg.MaximumEventAge {
			out.Condition = EventAgeExceeded
			break
		}
		cfg.Log.Info("asyncinvoke: the function failed; the event is retried", "invocation", out.Invocations, "retryIn", delay, "error", out.Err)
		if !esm.Sleep(ctx, delay) {
			return out
		}
	}
	out.Record = Record(cfg.FunctionARN, out.Condition, out.Invocations, event, payload, out.Err, time.Now())
	if cfg.OnFailure == nil {
		cfg.Log.Warn("asyncinvoke: event given up on and dropped (no on-failure destination)",
			"condition", out.Condition, "invocations", out.Invocations, "error", out.Err)
		return out
	}
	// Sent even as the stack stops: the event was given up on already.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	out.SendErr = cfg.OnFailure.Send(sctx, string(out.Record))
	cfg.Log.Warn("asyncinvoke: event given up on, sent to the on-failure destination",
		"condition", out.Condition, "invocations", out.Invocations, "error", out.Err, "sendError", out.SendErr)
	return out
}
