package runtimeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/internal/uuid"
)

// Result is the outcome of one invocation that reached the function.
type Result struct {
	RequestID string
	// Payload is the response body, or the raw error document when
	// FunctionError is set (as Lambda's Invoke API returns it).
	Payload []byte
	// FunctionError is set when the function reported an error (/error, or
	// an error trailer on a streamed response).
	FunctionError *FunctionError
	// Duration runs from handing the event to the function until its
	// response or error arrived.
	Duration time.Duration
}

// FunctionError is the error document a runtime posts, in the shape
// aws-lambda-go and the other official runtimes use.
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
	// StackTrace is kept raw because its shape differs between runtimes.
	StackTrace json.RawMessage `json:"stackTrace,omitempty"`
}

func (e *FunctionError) Error() string {
	return e.Type + ": " + e.Message
}

// invocation is one queued event and the channel its outcome arrives on.
type invocation struct {
	id      string
	event   []byte
	timeout time.Duration
	traceID string
	// done is buffered so a late response to an abandoned invocation
	// (timed out, caller gone) never blocks the API handler.
	done chan outcome
}

type outcome struct {
	res Result
	err error
}

// Invoke sends event to the function and waits for its response; timeout
// is the function's configured Timeout, from the moment it receives the
// event, and ctx bounds the whole call. A function error is reported in
// Result.FunctionError; the error is for the sandbox's failures
// (ErrExited, ErrInitFailed, ErrTimeout, ErrClosed, ctx's), with its log tail.
func (rt *Runtime) Invoke(ctx context.Context, event []byte, timeout time.Duration) (Result, error) {
	if timeout <= 0 {
		return Result{}, fmt.Errorf("invoke: timeout must be positive, got %v", timeout)
	}
	select {
	case rt.slot <- struct{}{}:
	case <-rt.closing:
		return Result{}, ErrClosed
	case <-ctx.Done():
		return Result{}, fmt.Errorf("invoke: waiting for the previous invocation: %w", ctx.Err())
	}
	defer func() { <-rt.slot }()

	inv := &invocation{
		id:      uuid.New(),
		event:   event,
		timeout: timeout,
		traceID: newTraceID(),
		done:    make(chan outcome, 1),
	}
	what := "invoke " + inv.id
	if err := rt.sandboxErr(); err != nil {
		return Result{RequestID: inv.id}, rt.withLogs(what, err)
	}

	select {
	case rt.pending <- inv:
	case <-rt.child.Done():
		return Result{RequestID: inv.id}, rt.withLogs(what, rt.sandboxErr())
	case <-rt.initFailed:
		return Result{RequestID: inv.id}, rt.withLogs(what, rt.sandboxErr())
	case <-rt.closing:
		return Result{RequestID: inv.id}, ErrClosed
	case <-ctx.Done():
		return Result{RequestID: inv.id}, rt.withLogs(what+": waiting for the function to poll /next", ctx.Err())
	}

	began := time.Now()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	finish := func(o outcome) (Result, error) {
		o.res.RequestID = inv.id
		o.res.Duration = time.Since(began)
		return o.res, o.err
	}
	select {
	case o := <-inv.done:
		return finish(o)
	case <-rt.child.Done():
		// A runtime reporting a panic posts /error and only then exits; the
		// handler queues the outcome before acknowledging, so check it first.
		select {
		case o := <-inv.done:
			return finish(o)
		default:
		}
		return finish(outcome{err: rt.withLogs(what+": during invocation", rt.sandboxErr())})
	case <-timer.C:
		// Unlike Lambda the process is not recycled; a late response is
		// accepted and dropped, so the sandbox stays usable.
		return finish(outcome{err: rt.withLogs(what, fmt.Errorf("%w after %v", ErrTimeout, timeout))})
	case <-rt.closing:
		return finish(outcome{err: ErrClosed})
	case <-ctx.Done():
		return finish(outcome{err: rt.withLogs(what, ctx.Err())})
	}
}
