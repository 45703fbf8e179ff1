// Package harness starts real local stand-ins for AWS services (DynamoDB
// Local, moto) as child processes on loopback ports, so the tests and the
// local tools (make dev, make invoke, make bench) exercise the real SDK wire
// protocol without Docker or network access. It also holds what those share
// around them: AWS clients for the stand-ins, the repository root and a
// hand-moved Clock. Helpers for tests only are in local/testkit.
package harness

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/internal/proc"
)

// Process is a running local service. Its lifetime is independent of the
// context used to start it: call Stop (typically via t.Cleanup).
type Process struct {
	// Name identifies the service in errors and logs ("dynamodb-local", "moto").
	Name string
	// Endpoint is the base URL, e.g. http://127.0.0.1:41234.
	Endpoint string
	// Port is the loopback TCP port the service listens on.
	Port int
	// StartupDuration is the time from exec to the first successful readiness probe.
	StartupDuration time.Duration

	child *proc.Child
	out   *proc.TailBuffer
}

// stopGrace is how long a service may shut down cleanly before SIGKILL; the
// services here keep no state worth flushing, so it is short.
const stopGrace = 2 * time.Second

// Stop terminates the service's whole process group and waits for it. It is
// safe to call more than once.
func (p *Process) Stop() error {
	if p == nil || p.child == nil {
		return nil
	}
	return p.child.Stop(stopGrace)
}
