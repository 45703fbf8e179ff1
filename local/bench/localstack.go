package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

// AllocateFunction is the logical ID whose figures are measured.
const AllocateFunction = "AllocateFunction"

// Stack is `make dev`'s stack with GameFabric pointed at the stand-in and
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

// StartStack starts the stack with pool sandboxes per function.
func StartStack(ctx context.Context, root, workDir string, pool int, standIn *StandIn) (*Stack, error) {
	cfg := stack.Defaults()
	cfg.AnyFreePorts()
	cfg.API.Concurrency = pool
	// One Allocator that lists no Region, so the parameter Allocators stays
	// empty and every region goes to GameFabricUrl, the stand-in, whose
	// token the Allocator's and the Ping Service's secrets hold.
	cfg.GameFabric.Allocators = []stack.AllocatorConfig{{Name: "standin",
		AllocatorTokens: []string{standInToken}, RegistryTokens: []string{"bench-registry-token-unused"}}}
	cfg.GameFabric.Ping.Tokens = []string{standInToken}
	cfg.Fleet.Regions = nil
	maps.Copy(cfg.Parameters, map[string]string{
		"GameFabricUrl":          standIn.URL,
		"GameFabricAllocatePath": standIn.AllocatePath(),
		"GameFabricPingUrl":      standIn.PingURL,
		"FallbackRegion":         RegionFallback,
		"ZonesByRegion":          RegionOK + "=US_WEST," + RegionFallback + "=EU_CENTRAL," + RegionDown + "=US_EAST",
		// Nothing links back (the stand-in's servers do not exist): keep the
		// health sweep from marking them mid-run, which would also count
		// against the region.
		"LinkTimeout": "1h",
		// Every fallback must pay its primary attempt; with the default 3
		// the breaker would skip the failing primary.
		"RegionFailureThreshold": "1000000",
		"LogLevel":               "info",
	})
	work := filepath.Join(workDir, "stack-pool"+strconv.Itoa(pool))
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(work, "stack.log"))
	if err != nil {
		return nil, err
	}
	b := &Stack{StandIn: standIn, PoolSize: pool, logFile: logFile, Bin: filepath.Join(work, "bin", stack.FunctionDir(AllocateFunction), "bootstrap")}
	var started func(fn string, pid int) error
	if b.CPU, err = newCPUShares(); err != nil {
		b.CPUWhy = err.Error()
	} else {
		started = func(fn string, pid int) error {
			if fn != AllocateFunction {
				return nil
			}
			return b.CPU.add(pid)
		}
	}
	// No stream or rule delivers to a function: EventsFunction putting on
	// moto on every write would load the machine under the allocate
	// figures (MeasureEvents runs the events handler on its own).
	b.Stack, err = stack.Start(ctx, cfg, stack.Options{Root: root, WorkDir: work, Log: logFile, Streams: stack.StreamTuning{Off: true},
		Rules: stack.RuleTuning{Off: true}, SandboxStarted: started})
	if err != nil {
		_ = b.closeCPU()
		_ = logFile.Close()
		return nil, fmt.Errorf("start the local stack (log: %s): %w", logFile.Name(), err)
	}
	b.DDB = harness.NewDynamoDB(harness.AWSConfig(), b.DynamoDB)
	return b, nil
}

// Close stops every process of the stack.
func (s *Stack) Close() error {
	err := errors.Join(s.Stack.Close(), s.closeCPU())
	_ = s.logFile.Close()
	return err
}

func (s *Stack) closeCPU() error {
	if s.CPU == nil {
		return nil
	}
	return s.CPU.close()
}

// LogPath is where the stack's and its functions' output went.
func (s *Stack) LogPath() string { return s.logFile.Name() }

// CPU groups.
const (
	GroupBench          = "bench process (HTTP API gateway, Runtime APIs, stand-in, callers)"
	GroupSandboxes      = "AllocateFunction sandboxes"
	GroupOtherFunctions = "other functions"
	GroupDynamoDB       = "DynamoDB Local (Java)"
	GroupMoto           = "moto"
)

// Classify groups this stack's processes for CPU accounting.
func (s *Stack) Classify() Classifier {
	self, binDir := os.Getpid(), filepath.Dir(filepath.Dir(s.Bin))
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

func portOf(endpoint string) string { return endpoint[strings.LastIndexByte(endpoint, ':')+1:] }

func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// countingWriter counts what a function writes: what CloudWatch Logs would
// ingest.
type countingWriter struct{ bytes, lines atomic.Int64 }

func (c *countingWriter) Write(b []byte) (int, error) {
	c.bytes.Add(int64(len(b)))
	c.lines.Add(int64(bytes.Count(b, []byte{'\n'})))
	return len(b), nil
}

func (c *countingWriter) counts() (bytes, lines int64) { return c.bytes.Load(), c.lines.Load() }

// progress writes one progress line.
func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "bench: %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}
