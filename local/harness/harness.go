// Package harness starts real local stand-ins for AWS services (DynamoDB
// Local, moto) as child processes on loopback ports, so the tests and the
// local tools (make dev, make invoke, make bench) exercise the real SDK wire
// protocol without Docker or network access. It also holds what those share
// around them: AWS clients for the stand-ins, the repository root and a
// hand-moved Clock. Helpers for tests only are in local/testkit.
package harness

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/internal/proc"
)

// Process is a running local service. Its lifetime is independent of the
// context used to start it: call Stop (typically via t.Cleanup).
type Process struct {
	Name     string // "dynamodb-local" or "moto", in errors and logs
	Endpoint string // the base URL, e.g. http://127.0.0.1:41234
	Port     int
	// StartupDuration runs from exec to the first successful readiness probe.
	StartupDuration time.Duration

	child *proc.Child
	out   *proc.TailBuffer
}

// Stop terminates the service's whole process group and waits for it
// (SIGKILL after 2 s: the services keep no state worth flushing). It is
// safe to call more than once.
func (p *Process) Stop() error {
	if p == nil || p.child == nil {
		return nil
	}
	return p.child.Stop(2 * time.Second)
}

// serverSpec describes how to launch and probe one kind of local service.
type serverSpec struct {
	name, path, dir string
	args            func(port int) []string
	// probe returns nil once the service answers real requests.
	probe func(ctx context.Context, endpoint string) error
}

var errPortTaken = errors.New("port already in use")

// startServer launches spec on a free port and waits, 30 s at most, until
// it is ready. FreePort releases the port before the child binds it, so a
// parallel test may take it: then it tries again, thrice at most.
func startServer(ctx context.Context, spec serverSpec) (*Process, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for attempt := 1; ; attempt++ {
		p, err := startOnce(ctx, spec)
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return p, err
		}
	}
}

func startOnce(ctx context.Context, spec serverSpec) (*Process, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	out := proc.NewTailBuffer(proc.DefaultTailSize)
	// Not CommandContext: the service must outlive the startup context.
	cmd := exec.Command(spec.path, spec.args(port)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = spec.dir, out, out
	began := time.Now()
	child, err := proc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	p := &Process{Name: spec.name, Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), Port: port, child: child, out: out}
	if err := p.waitReady(ctx, spec.probe); err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	p.StartupDuration = time.Since(began)
	return p, nil
}

// waitReady probes p every 100 ms; its errors carry the output's last
// 4 KiB, where the exception or traceback that explains them is.
func (p *Process) waitReady(ctx context.Context, probe func(context.Context, string) error) error {
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	var lastProbeErr error
	for {
		select {
		case <-p.child.Done():
			if out := p.out.String(); strings.Contains(out, "Address already in use") || strings.Contains(out, "BindException") {
				return fmt.Errorf("%s could not bind port %d: %w", p.Name, p.Port, errPortTaken)
			}
			return fmt.Errorf("%s exited during startup (%s); output tail:\n%s", p.Name, p.child.ExitStatus(), p.out.Tail(4<<10))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w (last probe: %v); output tail:\n%s",
				p.Name, p.Endpoint, ctx.Err(), lastProbeErr, p.out.Tail(4<<10))
		case <-ticker.C:
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			lastProbeErr = probe(pctx, p.Endpoint)
			cancel()
			if lastProbeErr == nil {
				return nil
			}
		}
	}
}
