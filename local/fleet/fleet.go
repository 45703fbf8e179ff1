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
	defaultStagger        = 200 * time.Millisecond
	defaultRestartBackoff = 500 * time.Millisecond
	defaultStopGrace      = 5 * time.Second
	maxRestartBackoff     = 10 * time.Second
	// A process that lived at least this long was healthy; its slot's
	// backoff starts over.
	healthyRun = 5 * time.Second
)

// Fleet is a running set of slots.
type Fleet struct {
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
	cfg, slots, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Fleet{cancel: cancel, done: make(chan struct{}), running: map[string]int{}}
	for region := range cfg.Regions {
		f.running[region] = 0
	}
	out := &lockedWriter{w: cfg.Output}
	// Every launch of the fleet, relaunches included, waits its turn, so
	// that a fleet starting (or crashing) at once does not stampede.
	gate := rate.NewLimiter(rate.Every(cfg.Stagger), 1)
	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Go(func() { s.run(ctx, f, gate, out) })
	}
	go func() {
		wg.Wait()
		close(f.done)
	}()
	return f, nil
}

// prepare fills in defaults and lays the slots out in a stable order
// (regions sorted, then processes, then executions).
func prepare(cfg Config) (Config, []*slot, error) {
	cfg.Stagger = orDefault(cfg.Stagger, defaultStagger)
	cfg.RestartBackoff = orDefault(cfg.RestartBackoff, defaultRestartBackoff)
	cfg.StopGrace = orDefault(cfg.StopGrace, defaultStopGrace)
	if cfg.Output == nil {
		cfg.Output = io.Discard
	}
	var problems []error
	if cfg.Dir == "" {
		problems = append(problems, errors.New("fleet: the Dir option is required"))
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		problems = append(problems, err)
	}
	var slots []*slot
	regions := slices.Sorted(maps.Keys(cfg.Regions))
	for _, region := range regions {
		if region == "" || region == "." || region == ".." || filepath.Base(region) != region {
			problems = append(problems, fmt.Errorf("region %q cannot name a directory", region))
			continue
		}
		index := 0
		for i, p := range cfg.Regions[region] {
			if p.ConcurrentExecutions < 1 {
				problems = append(problems, fmt.Errorf("%s process %d: ConcurrentExecutions must be at least 1", region, i))
			}
			path, err := exec.LookPath(p.Command)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s process %d: %w", region, i, err))
			}
			for range p.ConcurrentExecutions {
				s := &slot{region: region, index: index, command: path, args: p.Args,
					dir: filepath.Join(dir, region, strconv.Itoa(index)), backoff: cfg.RestartBackoff,
					maxBackoff: max(maxRestartBackoff, cfg.RestartBackoff), grace: cfg.StopGrace}
				s.env = slices.Concat(os.Environ(), p.Env)
				s.extraEnv = cfg.ExtraEnv
				slots = append(slots, s)
				index++
			}
		}
	}
	if len(problems) > 0 {
		return cfg, nil, fmt.Errorf("fleet: %w", errors.Join(problems...))
	}
	for _, s := range slots {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return cfg, nil, fmt.Errorf("fleet: %w", err)
		}
	}
	return cfg, slots, nil
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
