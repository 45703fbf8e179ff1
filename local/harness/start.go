package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/internal/proc"
)

const (
	// startupTimeout applies when the caller's context has no earlier deadline.
	startupTimeout = 30 * time.Second
	probeInterval  = 100 * time.Millisecond
	// bindAttempts covers the window between FreePort releasing a port and
	// the child binding it, during which a parallel test may take it.
	bindAttempts = 3
	// errTailBytes keeps startup errors readable while still showing the
	// exception or traceback that explains them.
	errTailBytes = 4 << 10
)

// serverSpec describes how to launch and probe one kind of local service.
type serverSpec struct {
	name string
	path string
	args func(port int) []string
	dir  string
	// probe returns nil once the service answers real requests.
	probe func(ctx context.Context, client *http.Client, endpoint string) error
}

// startServer launches spec on a free port and waits until it is ready,
// retrying on a new port if the chosen one was taken in the meantime.
func startServer(ctx context.Context, spec serverSpec) (*Process, error) {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	var lastErr error
	for attempt := 0; attempt < bindAttempts; attempt++ {
		p, err := startOnce(ctx, spec)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

var errPortTaken = errors.New("port already in use")

func startOnce(ctx context.Context, spec serverSpec) (*Process, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	out := proc.NewTailBuffer(proc.DefaultTailSize)
	// Not CommandContext: the service must outlive the startup context.
	cmd := exec.Command(spec.path, spec.args(port)...)
	cmd.Dir = spec.dir
	cmd.Stdout, cmd.Stderr = out, out
	began := time.Now()
	child, err := proc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	p := &Process{
		Name:     spec.name,
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		Port:     port,
		child:    child,
		out:      out,
	}
	if err := waitReady(ctx, p, spec.probe); err != nil {
		stopErr := p.Stop()
		return nil, errors.Join(err, stopErr)
	}
	p.StartupDuration = time.Since(began)
	return p, nil
}

func waitReady(ctx context.Context, p *Process, probe func(context.Context, *http.Client, string) error) error {
	client := &http.Client{Timeout: 2 * time.Second}
	ticker := time.NewTicker(probeInterval)
	defer ticker.Stop()
	var lastProbeErr error
	for {
		select {
		case <-p.child.Done():
			output := p.out.String()
			if isBindFailure(output) {
				return fmt.Errorf("%s could not bind port %d: %w", p.Name, p.Port, errPortTaken)
			}
			return fmt.Errorf("%s exited during startup (%s); output tail:\n%s",
				p.Name, p.child.ExitStatus(), p.out.Tail(errTailBytes))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w (last probe: %v); output tail:\n%s",
				p.Name, p.Endpoint, ctx.Err(), lastProbeErr, p.out.Tail(errTailBytes))
		case <-ticker.C:
			if lastProbeErr = probe(ctx, client, p.Endpoint); lastProbeErr == nil {
				return nil
			}
		}
	}
}

func isBindFailure(output string) bool {
	return strings.Contains(output, "Address already in use") ||
		strings.Contains(output, "BindException")
}
