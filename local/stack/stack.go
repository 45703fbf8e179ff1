package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/fleet"
	"github.com/gamefabric-alloc/allocsvc/local/gateway"
	"github.com/gamefabric-alloc/allocsvc/local/sqssource"
	"github.com/gamefabric-alloc/allocsvc/local/streams"
	"github.com/gamefabric-alloc/allocsvc/local/template"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
)

// Options are where the stack builds, works and writes.
type Options struct {
	Root    string    // the repository (template.yaml, functions/, local/)
	WorkDir string    // binaries and game server working dirs
	Log     io.Writer // the stack's own log lines and every child's output
	Streams StreamTuning
	Rules   RuleTuning
	// SandboxStarted hears of every function sandbox's process as it
	// starts (make bench confines AllocateFunction's to a CPU share).
	SandboxStarted func(function string, pid int) error
	// WrapAPI wraps the HTTP API's handler and each function URL's (the
	// tests check every exchange against docs/openapi.yaml).
	WrapAPI func(http.Handler) http.Handler
}

// Stack is the running local product.
type Stack struct {
	*Components
	APIURL string
	// GameServerURL is where the game servers link, heartbeat and end
	// (pragmaBackendAddress): the function URL with GameServerEndpoint
	// FunctionUrl, APIURL with HttpApi. Like APIURL it has no trailing slash.
	GameServerURL string
	FunctionURLs  []FunctionURL // each on its own port
	Refs          map[string]string
	Routes        []template.Route // the HTTP API's, with the stack's parameters
	Fleet         *fleet.Fleet
	Schedules     []template.Schedule
	Mappings      []*streams.Mapping   // the DynamoDB stream event source mappings
	QueueSources  []*sqssource.Mapping // the SQS event source mappings

	pools   map[string]*gateway.Pool
	log     *slog.Logger
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closers []func() error
}

// Start brings everything up; ctx bounds start-up only.
func Start(ctx context.Context, cfg Config, o Options) (s *Stack, err error) {
	s = &Stack{pools: map[string]*gateway.Pool{}, log: slog.New(slog.NewTextHandler(o.Log, nil))}
	if o.WrapAPI == nil {
		o.WrapAPI = func(h http.Handler) http.Handler { return h }
	}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	t, err := LoadTemplate(o.Root)
	if err != nil {
		return s, err
	}
	fns := t.LogicalIDs(template.TypeServerlessFunction)
	pkgs := []string{"local/sampleserver"}
	for _, fn := range fns {
		pkgs = append(pkgs, "functions/"+FunctionDir(fn))
	}
	bins, err := Build(ctx, o.Root, filepath.Join(o.WorkDir, "bin"), pkgs...)
	if err != nil {
		return s, err
	}
	if s.Components, err = StartComponents(ctx, cfg, o.Root); err != nil {
		return s, err
	}
	s.closers = append(s.closers, s.Components.Close)

	if err := s.serveFunctions(cfg, o, fns, bins); err != nil {
		return s, err
	}
	if err := s.startEventSources(ctx, cfg, o); err != nil {
		return s, err
	}

	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.WatchEvents(runCtx, o.Log)
	}()
	s.Fleet, err = fleet.Start(runCtx, s.fleetConfig(cfg, bins["sampleserver"], o))
	if err != nil {
		return s, fmt.Errorf("game server fleet: %w", err)
	}
	for _, d := range cfg.drainSchedules() {
		s.wg.Add(1)
		go s.runDrain(runCtx, d)
	}
	if s.Schedules, err = s.Template.Schedules(s.Refs); err != nil {
		return s, err
	}
	// The first scheduled run waits until the staggered game servers have
	// registered, so the ping cache lists every region from the start.
	firstRun := time.Duration(cfg.servers()+1)*cfg.Fleet.Stagger + time.Second
	for _, sch := range s.Schedules {
		period, err := config.ParseRate(sch.Expression)
		if err != nil {
			return s, fmt.Errorf("%s schedule: %w", sch.FunctionLogicalID, err)
		}
		s.wg.Add(1)
		go s.runSchedule(runCtx, sch, firstRun, period)
	}
	return s, nil
}

func (s *Stack) fleetConfig(cfg Config, sampleServer string, o Options) fleet.Config {
	regions := map[string][]fleet.Process{}
	var rooms []int // the Agones region's, by slot (fleet lays a region's slots out in this order)
	for region, procs := range cfg.Fleet.Regions {
		for _, p := range procs {
			if s.Agones != nil && region == s.Agones.Region {
				rooms = append(rooms, slices.Repeat([]int{p.Rooms}, p.ConcurrentExecutions)...)
			}
			cmd := p.Command
			if cmd == SampleServer {
				cmd = sampleServer
			}
			// The Allocator's variables come first: the entry's own env wins,
			// as Armada env vars beat Allocator-injected ones in GameFabric.
			env := slices.Concat(s.FleetEnv(region), p.ProcessEnv())
			regions[region] = append(regions[region], fleet.Process{Command: cmd, Args: p.Args, Env: env, ConcurrentExecutions: p.ConcurrentExecutions})
		}
	}
	return fleet.Config{
		Regions: regions,
		Stagger: cfg.Fleet.Stagger,
		Dir:     filepath.Join(o.WorkDir, "fleet"),
		Output:  o.Log,
		ExtraEnv: func(region string, slot int) []string {
			env := []string{fmt.Sprintf("SERVER_NAME=%s-%d", region, slot)}
			if s.Agones != nil && region == s.Agones.Region {
				env = append(env, s.Agones.slotEnv(slot, rooms[slot])...)
			}
			return env
		},
	}
}

// runSchedule invokes the function after first (so caches fill at once)
// and then every period, as EventBridge would.
func (s *Stack) runSchedule(ctx context.Context, sch template.Schedule, first, period time.Duration) {
	defer s.wg.Done()
	every(ctx, first, period, func() {
		if _, err := s.InvokeScheduled(ctx, sch.FunctionLogicalID); err != nil && ctx.Err() == nil {
			s.log.Warn("scheduled invocation failed", "function", sch.FunctionLogicalID, "error", err)
		}
	})
}

// InvokeScheduled runs fn once with the event EventBridge sends a
// scheduled function.
func (s *Stack) InvokeScheduled(ctx context.Context, fn string) (json.RawMessage, error) {
	now := time.Now().UTC()
	event, _ := json.Marshal(map[string]any{
		"version": "0", "id": strconv.FormatInt(now.UnixNano(), 16), "detail-type": "Scheduled Event",
		"source": "aws.events", "account": "000000000000", "time": now.Format(time.RFC3339), "region": "us-east-1",
		"resources": []string{"arn:aws:events:us-east-1:000000000000:rule/local-" + fn}, "detail": map[string]any{},
	})
	return s.Invoke(ctx, fn, event)
}

// Invoke runs fn once with event, synchronously; a function error comes
// with its payload.
func (s *Stack) Invoke(ctx context.Context, fn string, event []byte) (json.RawMessage, error) {
	pool, ok := s.pools[fn]
	if !ok {
		return nil, fmt.Errorf("no function %s", fn)
	}
	return invoke(ctx, pool, event, time.Minute)
}

// Close stops everything: the fleet first (its servers end their games
// through the API), then schedules, the API, the functions and components.
func (s *Stack) Close() error {
	var errs []error
	if s.Fleet != nil {
		errs = append(errs, s.Fleet.Stop())
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	return errors.Join(append(errs, closeAll(&s.closers))...)
}

// prefixed writes each line of a child's output prefixed with its name.
func prefixed(w io.Writer, name string) io.Writer {
	return &linePrefixer{w: w, prefix: "[" + name + "] "}
}

type linePrefixer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append([]byte(p.prefix), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
	}
}

// FunctionDir maps a function's logical ID to its folder under functions/
// by the project's convention: AllocateFunction → functions/allocate.
func FunctionDir(logicalID string) string {
	return strings.ToLower(strings.TrimSuffix(logicalID, "Function"))
}

// Build is BuildFor this machine's architecture.
func Build(ctx context.Context, root, binDir string, pkgs ...string) (map[string]string, error) {
	return BuildFor(ctx, root, binDir, runtime.GOARCH, pkgs...)
}

// BuildFor compiles the named packages for linux/goarch with the
// Makefile's flags into binDir/<last element>/bootstrap, and returns the
// binaries by last element. One `go build` per package keeps the output
// name "bootstrap", as in Lambda; the build cache makes repeats cheap.
func BuildFor(ctx context.Context, root, binDir, goarch string, pkgs ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			return nil, fmt.Errorf("build %s: %w", pkg, err)
		}
		name := filepath.Base(pkg)
		bin := filepath.Join(binDir, name, "bootstrap")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", bin, "./"+pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build %s for linux/%s: %v\n%s", pkg, goarch, err, b)
		}
		out[name] = bin
	}
	return out, nil
}
