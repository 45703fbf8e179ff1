package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Child is a started process that leads its own process group, so that
// wrappers such as pyenv shims or JVM launchers cannot leave orphans behind.
type Child struct {
	cmd  *exec.Cmd
	done chan struct{}

	// waitErr is written once before done is closed.
	waitErr error

	stopOnce sync.Once
	stopErr  error
}

// Start runs cmd in a new process group and reaps it in the background.
// cmd.Stdout/Stderr must already be set by the caller.
func Start(cmd *exec.Cmd) (*Child, error) {
	// Pdeathsig: if this process dies without stopping its children (a
	// panicking test skips its cleanup), the kernel kills them rather than
	// leak a JVM.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Without WaitDelay a grandchild holding our stdout pipe open would make
	// Wait block forever after the leader exits.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	c := &Child{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Pid is the process (and process group) id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// ExitStatus describes how the process ended, e.g. "exit status 2" or
// "signal: killed"; it is "running" until Done is closed.
func (c *Child) ExitStatus() string {
	select {
	case <-c.done:
		if c.waitErr == nil {
			return "exit status 0"
		}
		return c.waitErr.Error()
	default:
		return "running"
	}
}

// Stop sends SIGTERM to the whole group, escalates to SIGKILL after grace
// (immediately when grace <= 0) and waits for the leader to be reaped.
// It is idempotent; later calls return the first call's result.
func (c *Child) Stop(grace time.Duration) error {
	c.stopOnce.Do(func() { c.stopErr = c.stop(grace) })
	return c.stopErr
}

func (c *Child) stop(grace time.Duration) error {
	pgid := c.cmd.Process.Pid
	select {
	case <-c.done:
	default:
		if grace > 0 {
			if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
				return err
			}
			select {
			case <-c.done:
			case <-time.After(grace):
			}
		}
	}
	// Even once the leader is gone, members of its group may not be.
	if err := signalGroup(pgid, syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("process group %d still running 10s after SIGKILL", pgid)
	}
}

func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("sending %v to process group %d: %w", sig, pgid, err)
}
