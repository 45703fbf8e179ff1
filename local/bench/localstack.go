package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

// AllocateFunction is the logical ID whose figures are measured.
const AllocateFunction = "AllocateFunction"

// StackOptions configures one local stack for the bench.
type StackOptions struct {
	Root, WorkDir string
	PoolSize      int // sandboxes per function (local/dev.yaml: 4)
	StandIn       *StandIn
}

// Stack is `make dev`'s stack with the allocator pointed at the stand-in and
// no game servers: HTTP API → real bootstraps → DynamoDB Local and moto.
type Stack struct {
	*stack.Stack
	StandIn  *StandIn
	PoolSize int
	DDB      *dynamodb.Client // the bench's own client, for reading records
	Bin      string           // the allocate bootstrap the sandboxes run
	// CPU confines AllocateFunction's sandboxes to a Lambda CPU share
	// (MeasureCPUShare); nil, with CPUWhy, where the machine cannot.
	CPU     *cpuShares
	CPUWhy  string
	logFile *os.File
}

// StartStack starts the stack. GameFabric is redirected to the stand-in
// through the template parameters (cfg.Parameters override every ref,
// GameFabricUrl and GameFabricPingUrl included).
func StartStack(ctx context.Context, o StackOptions) (*Stack, error) {
	cfg := stack.Defaults()
	cfg.AnyFreePorts() // loopback, any free port
	cfg.API.Concurrency = o.PoolSize
	// One Allocator that lists no Region, so the template parameter
	// Allocators stays empty and every region goes to GameFabricUrl, which
	// the parameters below point at the stand-in; its secret and the Ping
	// Service's hold the stand-in's token, which it takes for both calls.
	cfg.GameFabric.Allocators = []stack.AllocatorConfig{{Name: "standin",
		AllocatorTokens: []string{standInToken}, RegistryTokens: []string{"bench-registry-token-unused"}}}
	cfg.GameFabric.Ping.Tokens = []string{standInToken}
	cfg.Fleet.Regions = nil // the stand-in allocates; no game servers needed
	for k, v := range map[string]string{
		"GameFabricUrl":          o.StandIn.URL,
		"GameFabricAllocatePath": o.StandIn.AllocatePath(),
		"GameFabricPingUrl":      o.StandIn.PingURL,
		"FallbackRegion":         RegionFallback,
		"ZonesByRegion":          RegionOK + "=US_WEST," + RegionFallback + "=EU_CENTRAL," + RegionDown + "=US_EAST",
		// Nothing links back (the stand-in's servers do not exist): keep the
		// health sweep from marking them LinkTimeout mid-run, which would also
		// count against the region.
		"LinkTimeout": "1h",
		// Every fallback request must pay its primary attempt; with the
		// default 3 the breaker would skip the failing primary after three.
		"RegionFailureThreshold": "1000000",
		"LogLevel":               "info",
	} {
		cfg.Parameters[k] = v
	}
	work := filepath.Join(o.WorkDir, "stack-pool"+strconv.Itoa(o.PoolSize))
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("stack work dir: %w", err)
	}
	// An *os.File serialises concurrent writes itself.
	logFile, err := os.Create(filepath.Join(work, "stack.log"))
	if err != nil {
		return nil, fmt.Errorf("stack log: %w", err)
	}
	// No stream event source mappings: EventsFunction invoked on every
	// write, putting on moto (which delivers to the tap's queues inside the
	// call), would load the machine under the allocate figures.
	// MeasureEvents runs the events handler on its own.
	shares, whyNot := newCPUShares()
	var started func(fn string, pid int) error
	if shares != nil {
		started = func(fn string, pid int) error {
			if fn != AllocateFunction {
				return nil
			}
			return shares.add(pid)
		}
	}
	// No stream or rule delivers to a function: the bench measures the
	// allocate path alone.
	s, err := stack.Start(ctx, cfg, stack.Options{Root: o.Root, WorkDir: work, Log: logFile, Streams: stack.StreamTuning{Off: true},
		Rules: stack.RuleTuning{Off: true}, SandboxStarted: started})
	if err != nil {
		_ = logFile.Close()
		if shares != nil {
			_ = shares.close()
		}
		return nil, fmt.Errorf("start the local stack (log: %s): %w", logFile.Name(), err)
	}
	b := &Stack{Stack: s, StandIn: o.StandIn, PoolSize: o.PoolSize, logFile: logFile, CPU: shares,
		DDB: harness.NewDynamoDB(harness.AWSConfig(), s.DynamoDB),
		Bin: filepath.Join(work, "bin", stack.FunctionDir(AllocateFunction), "bootstrap")}
	if whyNot != nil {
		b.CPUWhy = whyNot.Error()
	}
	return b, nil
}

// Close stops every process of the stack.
func (s *Stack) Close() error {
	err := s.Stack.Close()
	if s.CPU != nil {
		err = errors.Join(err, s.CPU.close())
	}
	_ = s.logFile.Close()
	return err
}

// LogPath is where the stack's and its functions' output went.
func (s *Stack) LogPath() string { return s.logFile.Name() }

// Classify groups this stack's processes for CPU accounting.
func (s *Stack) Classify() Classifier {
	self := os.Getpid()
	binDir := filepath.Dir(filepath.Dir(s.Bin))
	ddbPort, motoPort := portOf(s.DynamoDB), portOf(s.SecretsManager)
	return func(pid int, exe string, cmdline []string) string {
		exe = strings.TrimSuffix(exe, " (deleted)")
		switch {
		case pid == self:
			return GroupBench
		case exe == s.Bin:
			return GroupSandboxes
		case strings.HasPrefix(exe, binDir+string(filepath.Separator)):
			return GroupOtherFunctions
		case slices.Contains(cmdline, "DynamoDBLocal.jar") && argAfter(cmdline, "-port") == ddbPort:
			return GroupDynamoDB
		case argAfter(cmdline, "-p") == motoPort && strings.Contains(strings.Join(cmdline, " "), "moto"):
			return GroupMoto
		}
		return ""
	}
}

// CPU groups.
const (
	GroupBench          = "bench process (HTTP API gateway, Runtime APIs, stand-in, callers)"
	GroupSandboxes      = "AllocateFunction sandboxes"
	GroupOtherFunctions = "other functions"
	GroupDynamoDB       = "DynamoDB Local (Java)"
	GroupMoto           = "moto"
)

func portOf(endpoint string) string {
	i := strings.LastIndexByte(endpoint, ':')
	return endpoint[i+1:]
}

func argAfter(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// countingWriter counts what a function writes: what CloudWatch Logs would
// ingest.
type countingWriter struct {
	mu           sync.Mutex
	bytes, lines int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += int64(len(b))
	c.lines += int64(bytes.Count(b, []byte{'\n'}))
	return len(b), nil
}

func (c *countingWriter) counts() (bytes, lines int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.lines
}

// progress writes one progress line.
func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "bench: %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}
