package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

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
func (s *slot) run(ctx context.Context, f *Fleet, gate *launchGate, out *lockedWriter) {
	next := s.backoff
	for {
		if gate.wait(ctx) != nil {
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
	r, w, err := os.Pipe()
	if err != nil {
		return "not launched: " + err.Error()
	}
	defer r.Close()
	cmd := exec.Command(s.command, s.args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	if s.extraEnv != nil {
		cmd.Env = slices.Concat(s.env, s.extraEnv(s.region, s.index))
	}
	// One pipe for both streams keeps a child's stdout and stderr lines in
	// their original order. Its own process group lets one signal reach
	// the child's children too.
	cmd.Stdout, cmd.Stderr = w, w
	// Pdeathsig: game servers die with the supervisor even if it crashes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	w.Close() // the child holds its own copy
	if err != nil {
		return "not launched: " + err.Error()
	}
	pid := cmd.Process.Pid
	f.launched(s.region)
	defer f.exited(s.region)
	out.line(s.prefix(), "fleet: launched pid %d", pid)

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		copyLines(out, s.prefix(), r)
	}()
	exited := make(chan string, 1)
	go func() {
		state, err := cmd.Process.Wait()
		if err != nil {
			exited <- err.Error()
			return
		}
		exited <- state.String()
	}()

	var status string
	select {
	case status = <-exited:
	case <-ctx.Done():
		status = s.terminate(pid, exited, f)
	}
	// Whatever the leader left behind in its group goes with it. The group
	// id stays reserved while any member lives, so this cannot hit a
	// stranger.
	signalGroup(pid, syscall.SIGKILL, f)
	// A grandchild that escaped the group (setsid) could hold the pipe
	// open for ever; its output is not worth waiting for.
	select {
	case <-copied:
	case <-time.After(time.Second):
		r.Close()
		<-copied
	}
	return status
}

// terminate asks the group to stop, then kills it after the grace period.
func (s *slot) terminate(pid int, exited <-chan string, f *Fleet) string {
	signalGroup(pid, syscall.SIGTERM, f)
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case status := <-exited:
		return status
	case <-t.C:
	}
	signalGroup(pid, syscall.SIGKILL, f)
	return <-exited + " after the stop grace period"
}

func signalGroup(pid int, sig syscall.Signal, f *Fleet) {
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		f.failed(fmt.Errorf("fleet: %v to process group %d: %w", sig, pid, err))
	}
}

// launchGate spaces all launches of the fleet, relaunches included, so
// that a fleet starting (or crashing) at once does not stampede.
type launchGate struct {
	every time.Duration

	mu   sync.Mutex
	next time.Time
}

func (g *launchGate) wait(ctx context.Context) error {
	g.mu.Lock()
	at := time.Now()
	if g.next.After(at) {
		at = g.next
	}
	g.next = at.Add(g.every)
	g.mu.Unlock()
	return wait.Sleep(ctx, time.Until(at))
}
