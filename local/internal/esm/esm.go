// Package esm is what the local stand-ins for Lambda's event sources share
// (local/streams, local/sqssource, local/asyncinvoke): the function they
// invoke, where they set records aside, and their polling goroutines.
package esm

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Invoker runs the function once, synchronously, with event and returns
// its response payload. Any error is a failed invocation (a function error,
// a timeout, a crash), which Lambda retries or leaves for redelivery.
type Invoker interface {
	Invoke(ctx context.Context, event []byte) ([]byte, error)
}

// InvokerFunc adapts a function to Invoker.
type InvokerFunc func(ctx context.Context, event []byte) ([]byte, error)

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, event []byte) ([]byte, error) { return f(ctx, event) }

// Destination receives on-failure records (an SQS queue in Lambda).
type Destination interface {
	Send(ctx context.Context, body string) error
}

// RequestContext and ResponseContext are the members of Lambda's
// on-failure records that say what was invoked and how it ended.
type RequestContext struct {
	RequestID              string `json:"requestId"`
	FunctionArn            string `json:"functionArn"`
	Condition              string `json:"condition"`
	ApproximateInvokeCount int    `json:"approximateInvokeCount"`
}

// ResponseContext: see RequestContext.
type ResponseContext struct {
	StatusCode      int    `json:"statusCode"`
	ExecutedVersion string `json:"executedVersion"`
	FunctionError   string `json:"functionError,omitempty"`
}

// TimestampLayout is the on-failure records' timestamp.
const TimestampLayout = "2006-01-02T15:04:05.000Z"

// Or is v, or def when v is not positive (unset).
func Or[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Logger is log, or one that discards, with args.
func Logger(log *slog.Logger, args ...any) *slog.Logger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With(args...)
}

// Sleep waits d; false when ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Loops are goroutines that run until Stop cancels their context.
type Loops struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewLoops returns Loops with none running yet.
func NewLoops() *Loops {
	l := &Loops{}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// Go runs f in a goroutine of its own with the loops' context.
func (l *Loops) Go(f func(ctx context.Context)) {
	l.wg.Go(func() { f(l.ctx) })
}

// Stop cancels the loops' context and waits for every goroutine to end.
func (l *Loops) Stop() error {
	l.cancel()
	l.wg.Wait()
	return nil
}
