// Package runtimeapi is a Docker-free `sam local invoke`: it serves the AWS
// Lambda Runtime API (2018-06-01) on loopback and drives a real, locally
// built `bootstrap` binary through it, one invocation at a time, exactly as
// a provided.al2023 sandbox would.
package runtimeapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/internal/proc"
)

// Sentinel errors returned (wrapped) by Invoke and WaitInit.
var (
	// ErrExited means the function process is gone; the Runtime is unusable.
	ErrExited = errors.New("function process exited")
	// ErrInitFailed means the runtime posted /runtime/init/error.
	ErrInitFailed = errors.New("function init failed")
	// ErrTimeout means no response arrived before the invocation deadline.
	ErrTimeout = errors.New("function timed out")
	// ErrClosed means Close was called.
	ErrClosed = errors.New("runtime closed")
)

// Option customises Start.
type Option func(*config)

type config struct {
	functionName string
	logOutput    io.Writer
	started      func(pid int) error
	// dir is the binary's directory: the working directory and
	// LAMBDA_TASK_ROOT, as in Lambda where both are /var/task.
	dir string
}

// WithFunctionName sets AWS_LAMBDA_FUNCTION_NAME and the invoked ARN
// (default local-function).
func WithFunctionName(name string) Option { return func(c *config) { c.functionName = name } }

// WithLogOutput also copies the function's output to w as it is produced
// (e.g. a writer that calls t.Log), in addition to Logs.
func WithLogOutput(w io.Writer) Option { return func(c *config) { c.logOutput = w } }

// WithStarted calls started with the bootstrap's process id as soon as it
// runs, before the Runtime API answers its first request (e.g. to confine
// it to a cgroup, as Lambda confines a sandbox to its CPU share). An error
// stops the process and fails Start.
func WithStarted(started func(pid int) error) Option { return func(c *config) { c.started = started } }

// Runtime is one Lambda execution environment: a Runtime API server plus
// the function process polling it. It does not restart the process: after it
// exits (for example after a panic) every Invoke fails with ErrExited, and a
// fresh Runtime must be started, which is a cold start in Lambda terms.
type Runtime struct {
	cfg    config
	addr   string
	server *http.Server
	child  *proc.Child
	logs   *proc.TailBuffer
	began  time.Time

	// pending hands one invocation to a blocked /next; unbuffered so that a
	// successful send means the function has really received it.
	pending chan *invocation
	// slot serialises Invoke calls, as a Lambda sandbox serves one at a time.
	slot chan struct{}

	// initDone closes on the first /next, after initDuration is set.
	initDone, initFailed, closing chan struct{}
	initDuration                  time.Duration
	markInitDone, markInitFailed  func()
	close                         func() error

	mu      sync.Mutex
	current *invocation // handed to the function and not answered yet
	initErr *FunctionError
}

// Start serves the Runtime API on a free 127.0.0.1 port and launches binary
// with the standard Lambda environment plus env (entries in env win). It
// returns once the process is running, without waiting for its init phase;
// use WaitInit or just Invoke. ctx only bounds start-up; call Close to stop.
func Start(ctx context.Context, binary string, env []string, opts ...Option) (*Runtime, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("starting runtime: %w", err)
	}
	cfg := config{functionName: "local-function"}
	for _, o := range opts {
		o(&cfg)
	}
	bin, err := filepath.Abs(binary)
	if err != nil {
		return nil, fmt.Errorf("resolving function binary %q: %w", binary, err)
	}
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("function binary %s is missing or not executable (build it first, e.g. GOOS=linux CGO_ENABLED=0 go build -o bootstrap)", bin)
	}
	cfg.dir = filepath.Dir(bin)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the Runtime API: %w", err)
	}
	rt := &Runtime{
		cfg:        cfg,
		addr:       ln.Addr().String(),
		logs:       proc.NewTailBuffer(proc.DefaultTailSize),
		pending:    make(chan *invocation),
		slot:       make(chan struct{}, 1),
		initDone:   make(chan struct{}),
		initFailed: make(chan struct{}),
		closing:    make(chan struct{}),
	}
	rt.markInitDone = sync.OnceFunc(func() {
		rt.initDuration = time.Since(rt.began)
		close(rt.initDone)
	})
	rt.markInitFailed = sync.OnceFunc(func() { close(rt.initFailed) })
	rt.close = sync.OnceValue(func() error {
		close(rt.closing)
		// SIGTERM, then SIGKILL after 2 s, as Lambda's shutdown phase; and
		// Close, not Shutdown: /next requests block indefinitely by design.
		return errors.Join(rt.child.Stop(2*time.Second), rt.server.Close())
	})
	// /next legitimately blocks for as long as no invocation is queued, so
	// only the header read gets a timeout.
	rt.server = &http.Server{Handler: rt.routes(), ReadHeaderTimeout: 10 * time.Second}

	var out io.Writer = rt.logs
	if cfg.logOutput != nil {
		out = io.MultiWriter(rt.logs, cfg.logOutput)
	}
	cmd := exec.Command(bin)
	cmd.Dir = cfg.dir
	// exec.Cmd keeps the last value of a duplicated key, so appending the
	// caller's entries after the defaults lets the caller override them.
	cmd.Env = append(lambdaEnv(cfg, rt.addr), env...)
	cmd.Stdout, cmd.Stderr = out, out
	rt.began = time.Now()
	if rt.child, err = proc.Start(cmd); err == nil && cfg.started != nil {
		if err = cfg.started(rt.child.Pid()); err != nil {
			_ = rt.child.Stop(0)
		}
	}
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("starting function: %w", err)
	}
	// Serving only now publishes began and child to the handlers; the
	// function's first connection simply waits in the listen backlog.
	go func() { _ = rt.server.Serve(ln) }()
	return rt, nil
}

// Addr is the Runtime API address given to the function (host:port).
func (rt *Runtime) Addr() string { return rt.addr }

// Logs returns the last ~64 KiB of the function's stdout and stderr. Output
// travels through a pipe, so a line printed just before a response may show
// up a moment after Invoke returns.
func (rt *Runtime) Logs() string { return rt.logs.String() }

// InitDuration is the time from process start to its first /next call,
// Lambda's "Init Duration"; zero until init has completed.
func (rt *Runtime) InitDuration() time.Duration {
	if !isClosed(rt.initDone) {
		return 0
	}
	return rt.initDuration
}

// InitError returns what the runtime posted to /runtime/init/error, if any.
func (rt *Runtime) InitError() *FunctionError {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.initErr
}

// WaitInit blocks until the function finishes init (first /next), fails
// init, exits, or ctx ends. Useful to measure cold starts apart from the
// first invocation.
func (rt *Runtime) WaitInit(ctx context.Context) error {
	select {
	case <-rt.initDone:
		return nil
	case <-rt.initFailed:
	case <-rt.child.Done():
	case <-rt.closing:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("waiting for function init: %w", ctx.Err())
	}
	return rt.withLogs("waiting for function init", rt.sandboxErr())
}

// Close stops the function (SIGTERM to its process group, SIGKILL after 2 s)
// and the API server. It is safe to call more than once.
func (rt *Runtime) Close() error { return rt.close() }

func (rt *Runtime) recordInitError(fe *FunctionError) {
	rt.mu.Lock()
	if rt.initErr == nil {
		rt.initErr = fe
	}
	rt.mu.Unlock()
	rt.markInitFailed()
}

// sandboxErr explains why the sandbox can no longer serve invocations, or
// returns nil if it still can.
func (rt *Runtime) sandboxErr() error {
	initErr := rt.InitError()
	exited := isClosed(rt.child.Done())
	phase := "after init"
	if !isClosed(rt.initDone) {
		phase = "during init (it never polled /next)"
	}
	switch {
	case isClosed(rt.closing):
		// Close kills the process, so this must win over "exited".
		return ErrClosed
	case initErr != nil && exited:
		return fmt.Errorf("%w: %s; process then exited (%s)", ErrInitFailed, initErr, rt.child.ExitStatus())
	case initErr != nil:
		return fmt.Errorf("%w: %s", ErrInitFailed, initErr)
	case exited:
		return fmt.Errorf("%w %s: %s", ErrExited, phase, rt.child.ExitStatus())
	}
	return nil
}

// withLogs prefixes err with context and appends the function's last 4 KiB
// of output, which is where the actual panic or log.Fatal message will be.
func (rt *Runtime) withLogs(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w\n--- function output (tail) ---\n%s", what, err, rt.logs.Tail(4<<10))
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
