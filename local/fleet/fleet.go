// Package fleet keeps game server processes running on one machine, the
// way a GameLift runtime configuration does: per region, each Process
// entry runs ConcurrentExecutions copies; launches are staggered; a
// process that exits for any reason is relaunched after a backoff.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Process is one server process configuration.
type Process struct {
	Command              string
	Args                 []string
	Env                  []string // added to the supervisor's own environment
	ConcurrentExecutions int
}

// Config is the fleet's runtime configuration.
type Config struct {
	Regions        map[string][]Process
	Stagger        time.Duration // between any two launches; default 200ms
	RestartBackoff time.Duration // before a relaunch; default 500ms, doubling while a slot keeps dying young, at most 10s
	StopGrace      time.Duration // SIGTERM → SIGKILL; default 5s
	Dir            string        // each slot runs in <Dir>/<region>/<index>
	Output         io.Writer     // children's stdout and stderr, one prefixed line at a time; nil discards
	ExtraEnv       func(region string, slot int) []string
}

const (
	maxRestartBackoff = 10 * time.Second
	// A process that lived at least this long was healthy; its slot's
	// backoff starts over.
	healthyRun = 5 * time.Second
)

// Fleet is a running set of slots.
type Fleet struct {
	cfg    Config
	out    *lockedWriter
	gate   *rate.Limiter // every launch, relaunches included, waits its turn, so that a fleet starting (or crashing) at once does not stampede
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	running  map[string]int
	launches int
	errs     []error
}

// Start validates cfg, creates every slot's directory and starts
// launching. Cancelling ctx stops the fleet like Stop.
func Start(ctx context.Context, cfg Config) (*Fleet, error) {
	cfg.Stagger = orDefault(cfg.Stagger, 200*time.Millisecond)
	cfg.RestartBackoff = orDefault(cfg.RestartBackoff, 500*time.Millisecond)
	cfg.StopGrace = orDefault(cfg.StopGrace, 5*time.Second)
	if cfg.Output == nil {
		cfg.Output = io.Discard
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Fleet{cfg: cfg, out: &lockedWriter{w: cfg.Output}, gate: rate.NewLimiter(rate.Every(cfg.Stagger), 1),
		cancel: cancel, done: make(chan struct{}), running: map[string]int{}}
	slots, err := f.slots()
	if err != nil {
		cancel()
		return nil, err
	}
	for region := range cfg.Regions {
		f.running[region] = 0
	}
	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Go(func() { s.run(ctx) })
	}
	go func() {
		wg.Wait()
		close(f.done)
	}()
	return f, nil
}

// slots validates the configuration, naming every problem, and lays the
// slots out in a stable order (regions sorted, then processes, then
// executions), each with its directory.
func (f *Fleet) slots() ([]*slot, error) {
	var problems []error
	if f.cfg.Dir == "" {
		problems = append(problems, errors.New("fleet: the Dir option is required"))
	}
	dir, err := filepath.Abs(f.cfg.Dir)
	if err != nil {
		problems = append(problems, err)
	}
	var slots []*slot
	for _, region := range slices.Sorted(maps.Keys(f.cfg.Regions)) {
		if region == "" || region == "." || region == ".." || filepath.Base(region) != region {
			problems = append(problems, fmt.Errorf("region %q cannot name a directory", region))
			continue
		}
		index := 0
		for i, p := range f.cfg.Regions[region] {
			if p.ConcurrentExecutions < 1 {
				problems = append(problems, fmt.Errorf("%s process %d: ConcurrentExecutions must be at least 1", region, i))
			}
			if p.Command, err = exec.LookPath(p.Command); err != nil {
				problems = append(problems, fmt.Errorf("%s process %d: %w", region, i, err))
			}
			for range p.ConcurrentExecutions {
				slots = append(slots, &slot{f: f, region: region, index: index, p: p, dir: filepath.Join(dir, region, strconv.Itoa(index))})
				index++
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("fleet: %w", errors.Join(problems...))
	}
	for _, s := range slots {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
	}
	return slots, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Stop terminates every process group (SIGTERM, then SIGKILL after
// StopGrace) and returns once nothing is left running. Later calls wait
// the same way and return the same result.
func (f *Fleet) Stop() error {
	f.cancel()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// Running counts live processes per region.
func (f *Fleet) Running() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.running)
}

// Launches counts every launch so far, relaunches included.
func (f *Fleet) Launches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.launches
}

// count counts a launch (+1) or an exit (-1) in region.
func (f *Fleet) count(region string, delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[region] += delta
	f.launches += max(delta, 0)
}

func (f *Fleet) failed(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}
