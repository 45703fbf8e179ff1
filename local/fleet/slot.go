package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/internal/proc"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// slot keeps one process running.
type slot struct {
	f      *Fleet
	region string
	index  int
	p      Process // Command resolved
	dir    string
}

func (s *slot) prefix() string { return "[" + s.region + "/" + strconv.Itoa(s.index) + "] " }

// run launches, waits and relaunches until ctx ends.
func (s *slot) run(ctx context.Context) {
	base := s.f.cfg.RestartBackoff
	next := base
	for {
		if s.f.gate.Wait(ctx) != nil {
			return
		}
		started := time.Now()
		status := s.launchAndWait(ctx)
		if ctx.Err() != nil {
			s.f.out.line(s.prefix(), "fleet: stopped (%s)", status)
			return
		}
		lived := time.Since(started)
		var delay time.Duration
		delay, next = restartDelay(next, base, max(maxRestartBackoff, base), lived)
		s.f.out.line(s.prefix(), "fleet: %s after %s; relaunching in %s", status, lived.Round(time.Millisecond), delay)
		if wait.Sleep(ctx, delay) != nil {
			return
		}
	}
}

// restartDelay returns the delay before this relaunch and the one to use
// after the next exit. A process that lived healthyRun starts the
// backoff over; one that died young doubles it, up to ceiling.
func restartDelay(next, base, ceiling, lived time.Duration) (delay, after time.Duration) {
	if lived >= healthyRun {
		return base, base
	}
	return next, min(2*next, ceiling)
}

// launchAndWait runs the process to its end (or stops it when ctx ends)
// and reports how it ended.
func (s *slot) launchAndWait(ctx context.Context) string {
	cmd := exec.Command(s.p.Command, s.p.Args...)
	cmd.Dir, cmd.Env = s.dir, slices.Concat(os.Environ(), s.p.Env)
	if s.f.cfg.ExtraEnv != nil {
		cmd.Env = append(cmd.Env, s.f.cfg.ExtraEnv(s.region, s.index)...)
	}
	// One writer for both streams keeps a child's stdout and stderr lines
	// in their original order.
	lines := &lineWriter{out: s.f.out, prefix: s.prefix()}
	cmd.Stdout, cmd.Stderr = lines, lines
	// proc.Start gives the child a process group of its own, so one signal
	// reaches its children too, and kills it with the supervisor even if
	// that crashes; a grandchild holding the output open cannot hold it up.
	child, err := proc.Start(cmd)
	if err != nil {
		return "not launched: " + err.Error()
	}
	s.f.count(s.region, 1)
	defer s.f.count(s.region, -1)
	s.f.out.line(s.prefix(), "fleet: launched pid %d", child.Pid())
	var after string
	select {
	case <-child.Done():
	case <-ctx.Done():
		if err := syscall.Kill(-child.Pid(), syscall.SIGTERM); err != nil && err != syscall.ESRCH {
			s.f.failed(fmt.Errorf("fleet: SIGTERM to pid %d: %w", child.Pid(), err))
		}
		select {
		case <-child.Done():
		case <-time.After(s.f.cfg.StopGrace):
			after = " after the stop grace period"
		}
	}
	// SIGKILL for whatever is left in the group, the leader's leftovers
	// included. The group id stays reserved while any member lives, so
	// this cannot hit a stranger.
	if err := child.Stop(0); err != nil {
		s.f.failed(fmt.Errorf("fleet: %w", err))
	}
	// The output is copied until the child is done; flushing sooner would
	// race that copy.
	select {
	case <-child.Done():
		lines.flush()
	default:
	}
	return child.ExitStatus() + after
}
