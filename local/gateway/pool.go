package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// Pool runs one function like Lambda does: up to size sandboxes (bootstrap
// processes), each serving one invocation at a time, started on demand (a
// cold start) and replaced when one dies.
type Pool struct {
	name  string
	start func(ctx context.Context) (*runtimeapi.Runtime, error)
	slots chan struct{} // one token per sandbox that may exist

	mu     sync.Mutex
	idle   []*runtimeapi.Runtime
	all    map[*runtimeapi.Runtime]bool
	closed bool
	// inFlight counts the invocations running or waiting for a sandbox.
	inFlight int
}

// ErrThrottled is Lambda's TooManyRequestsException: the function's
// reserved concurrency is all in use, so the invocation never ran.
var ErrThrottled = errors.New("throttled: the function's reserved concurrency is in use")

// NewPool allows up to size concurrent invocations of a function started by start.
func NewPool(name string, size int, start func(ctx context.Context) (*runtimeapi.Runtime, error)) *Pool {
	return &Pool{name: name, start: start, slots: make(chan struct{}, max(size, 1)), all: map[*runtimeapi.Runtime]bool{}}
}

// Invoke runs one invocation, waiting for a free sandbox if all are busy.
func (p *Pool) Invoke(ctx context.Context, event []byte, timeout time.Duration) (runtimeapi.Result, error) {
	return p.InvokeReserved(ctx, event, timeout, 0)
}

// InvokeReserved is Invoke throttled at the function's reserved
// concurrency, as Lambda throttles a function URL (429): with reserved > 0
// it fails at once with ErrThrottled when that many invocations, whoever
// made them, are running or waiting for a sandbox. Not emulated: the
// account's unreserved concurrency, and throttling Invoke's callers.
func (p *Pool) InvokeReserved(ctx context.Context, event []byte, timeout time.Duration, reserved int) (runtimeapi.Result, error) {
	if !p.admit(reserved) {
		return runtimeapi.Result{}, ErrThrottled
	}
	defer p.leave()
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return runtimeapi.Result{}, ctx.Err()
	}
	defer func() { <-p.slots }()

	rt, err := p.take(ctx)
	if err != nil {
		return runtimeapi.Result{}, err
	}
	res, err := rt.Invoke(ctx, event, timeout)
	// Lambda discards a sandbox that crashed or timed out.
	p.release(rt, errors.Is(err, runtimeapi.ErrExited) || errors.Is(err, runtimeapi.ErrInitFailed) || errors.Is(err, runtimeapi.ErrTimeout))
	return res, err
}

// admit counts an invocation in, unless reserved (> 0) are in flight.
func (p *Pool) admit(reserved int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if reserved > 0 && p.inFlight >= reserved {
		return false
	}
	p.inFlight++
	return true
}

func (p *Pool) leave() {
	p.mu.Lock()
	p.inFlight--
	p.mu.Unlock()
}

func (p *Pool) take(ctx context.Context) (*runtimeapi.Runtime, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("%s: pool closed", p.name)
	}
	if n := len(p.idle); n > 0 {
		rt := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return rt, nil
	}
	p.mu.Unlock()
	rt, err := p.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: start sandbox: %w", p.name, err)
	}
	p.mu.Lock()
	p.all[rt] = true
	p.mu.Unlock()
	return rt, nil
}

// release makes rt idle again, or stops it when it is broken or the pool
// closed.
func (p *Pool) release(rt *runtimeapi.Runtime, broken bool) {
	p.mu.Lock()
	keep := !broken && !p.closed
	if keep {
		p.idle = append(p.idle, rt)
	} else {
		delete(p.all, rt)
	}
	p.mu.Unlock()
	if !keep {
		_ = rt.Close()
	}
}

// Close stops every sandbox.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all, p.idle = map[*runtimeapi.Runtime]bool{}, nil
	p.mu.Unlock()
	var errs []error
	for rt := range all {
		errs = append(errs, rt.Close())
	}
	return errors.Join(errs...)
}
