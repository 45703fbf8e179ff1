package fleet

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/gamefabric-alloc/allocsvc/local/internal/proc"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// slot keeps one process running.
type slot struct {
	region  string
	index   int
	command string
	args    []string
	env     []string // the supervisor's environment plus the Process's
	dir     string

	extraEnv func(region string, slot int) []string // asked at every launch

	backoff, maxBackoff, grace time.Duration
}

func (s *slot) prefix() string { return "[" + s.region + "/" + strconv.Itoa(s.index) + "] " }

// run launches, waits and relaunches until ctx ends.
func (s *slot) run(ctx context.Context, f *Fleet, gate *rate.Limiter, out *lockedWriter) {
	next := s.backoff
	for {
		if gate.Wait(ctx) != nil {
			return
		}
		started := time.Now()
		status := s.launchAndWait(ctx, f, out)
		if ctx.Err() != nil {
			out.line(s.prefix(), "fleet: stopped (%s)", status)
			return
		}
		lived := time.Since(started)
		var delay time.Duration
		delay, next = restartDelay(next, s.backoff, s.maxBackoff, lived)
		out.line(s.prefix(), "fleet: %s after %s; relaunching in %s", status, lived.Round(time.Millisecond), delay)
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
func (s *slot) launchAndWait(ctx context.Context, f *Fleet, out *lockedWriter) string {
	cmd := exec.Command(s.command, s.args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	if s.extraEnv != nil {
		cmd.Env = slices.Concat(s.env, s.extraEnv(s.region, s.index))
	}
	// One writer for both streams keeps a child's stdout and stderr lines
	// in their original order.
	lines := &lineWriter{out: out, prefix: s.prefix()}
	cmd.Stdout, cmd.Stderr = lines, lines
	// proc.Start gives the child a process group of its own, so one signal
	// reaches its children too, and kills it with the supervisor even if
	// that crashes; a grandchild holding the output open cannot hold it up.
	child, err := proc.Start(cmd)
	if err != nil {
		return "not launched: " + err.Error()
	}
	f.count(s.region, 1)
	defer f.count(s.region, -1)
	out.line(s.prefix(), "fleet: launched pid %d", child.Pid())
	var after string
	select {
	case <-child.Done():
	case <-ctx.Done():
		_ = syscall.Kill(-child.Pid(), syscall.SIGTERM)
		select {
		case <-child.Done():
		case <-time.After(s.grace):
			after = " after the stop grace period"
		}
	}
	// SIGKILL for whatever is left in the group, the leader's leftovers
	// included. The group id stays reserved while any member lives, so
	// this cannot hit a stranger.
	if err := child.Stop(0); err != nil {
		f.failed(fmt.Errorf("fleet: %w", err))
	}
	lines.flush()
	return child.ExitStatus() + after
}
