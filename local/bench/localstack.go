package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

const (
	AllocateFunction = "AllocateFunction"
	// The stand-in's regions; FALLBACK_REGION is RegionFallback.
	RegionOK         = "us-west"      // 200 after the fixed delay
	RegionFallback   = "eu-central-1" // 200 after the same delay
	RegionDown       = "us-east"      // 503 at once
	Version          = benchEnvironment + "::" + benchArmadaSet
	benchEnvironment = "prag"
	benchArmadaSet   = "sample-game-armada-set"
	standInToken     = "bench-allocator-token"
)

// Stack is `make dev`'s stack with GameFabric pointed at the stand-in and
// no game servers. CPU is nil, with CPUWhy, where the machine cannot
// confine sandboxes to a CPU share.
type Stack struct {
	*stack.Stack
	StandIn  *StandIn
	PoolSize int
	DDB      *dynamodb.Client // the bench's own, for reading records
	Bin      string           // the allocate bootstrap the sandboxes run
	CPU      *cpuShares
	CPUWhy   string
	logFile  *os.File
}

// StartStack starts the stack with pool sandboxes per function.
func StartStack(ctx context.Context, root, workDir string, pool int, standIn *StandIn) (*Stack, error) {
	cfg := stack.Defaults()
	cfg.AnyFreePorts()
	cfg.API.Concurrency = pool
	// One Allocator that lists no Region: every region goes to GameFabricUrl.
	cfg.GameFabric.Allocators = []stack.AllocatorConfig{{Name: "standin",
		AllocatorTokens: []string{standInToken}, RegistryTokens: []string{"bench-registry-token-unused"}}}
	cfg.GameFabric.Ping.Tokens = []string{standInToken}
	cfg.Fleet.Regions = nil
	cfg.Agones = stack.AgonesConfig{Region: RegionAgones} // whole servers, as the GameFabric stand-in's
	maps.Copy(cfg.Parameters, map[string]string{
		"GameFabricUrl":          standIn.URL,
		"GameFabricAllocatePath": standIn.AllocatePath(),
		"GameFabricPingUrl":      standIn.PingURL,
		"FallbackRegion":         RegionFallback,
		"ZonesByRegion":          RegionOK + "=US_WEST," + RegionFallback + "=EU_CENTRAL," + RegionDown + "=US_EAST",
		// Nothing links back (the stand-in's servers do not exist): keep the
		// sweep from marking them, which would count against the region.
		"LinkTimeout": "1h",
		// Every fallback must pay its primary attempt, never skipped by the breaker.
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
	// No stream or rule delivers to a function: EventsFunction putting on moto
	// on every write would load the machine under the allocate figures.
	b.Stack, err = stack.Start(ctx, cfg, stack.Options{Root: root, WorkDir: work, Log: logFile, Streams: stack.StreamTuning{Off: true},
		Rules: stack.RuleTuning{Off: true}, SandboxStarted: started})
	if err != nil {
		_ = b.closeCPU()
		_ = logFile.Close()
		return nil, fmt.Errorf("start the local stack (log: %s): %w", logFile.Name(), err)
	}
	b.DDB = harness.NewDynamoDB(harness.AWSConfig(), b.DynamoDB)
	b.Agones.Allocator.Always(&agonesemu.Answer{Delay: standIn.Delay})
	return b, nil
}

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

// StandIn is GameFabric's allocator played by local/gfemu, with a fixed
// delay per successful answer.
type StandIn struct {
	*gfemu.Installation
	Delay  time.Duration
	client *gamefabric.Client
}

// StartStandIn serves the stand-in on loopback.
func StartStandIn(delay time.Duration) *StandIn {
	srv := gfemu.Start(standInToken)
	srv.Always(RegionOK, gfemu.Answer{Delay: delay})
	srv.Always(RegionFallback, gfemu.Answer{Delay: delay})
	srv.Always(RegionDown, gfemu.Answer{Status: http.StatusServiceUnavailable, Error: "no capacity (bench: primary down)"})
	// Live ping targets, so the ping refresh keeps every region Deployed.
	targets := map[string][]gamefabric.PingTarget{}
	for _, r := range []string{RegionOK, RegionFallback, RegionDown} {
		targets[r] = []gamefabric.PingTarget{{Address: "127.0.0.1", Port: 7600, Protocol: "udp"}}
	}
	srv.Ping.SetRegions(targets)
	// The function's own client: the direct reference pays the same work.
	return &StandIn{Installation: srv, Delay: delay, client: gamefabric.NewClient(&http.Client{}, srv.AllocateURL())}
}

// Direct makes one allocate call straight to the stand-in with the
// function's body shape; a non-2xx answer is a *gamefabric.Error.
func (s *StandIn) Direct(ctx context.Context, region, gameInstanceID string) (time.Duration, error) {
	req := gamefabric.AllocateRequest{Region: region, Attributes: map[string]string{"env": benchEnvironment, "armadaset": benchArmadaSet},
		Payload: allocation.Payload{GameInstanceID: gameInstanceID, PartnerGameToken: "bench-partner-token-0123456789abcdef0123456789abcdef",
			PragmaBackendAddress: "http://127.0.0.1:3000", ServerArgs: "-map=arena"}}
	start := time.Now()
	_, err := s.client.Allocate(ctx, standInToken, req)
	return time.Since(start), err
}

// UpstreamAllocations maps each game instance to the servers handed out.
func (s *StandIn) UpstreamAllocations() map[string][]string {
	out := map[string][]string{}
	for _, c := range s.Allocations() {
		if id, ok := c.Payload["GameInstanceId"].(string); ok {
			out[id] = append(out[id], c.Server)
		}
	}
	return out
}

// countingWriter counts what CloudWatch Logs would ingest.
type countingWriter struct{ bytes, lines atomic.Int64 }

func (c *countingWriter) Write(b []byte) (int, error) {
	c.bytes.Add(int64(len(b)))
	c.lines.Add(int64(bytes.Count(b, []byte{'\n'})))
	return len(b), nil
}

func (c *countingWriter) counts() (bytes, lines int64) { return c.bytes.Load(), c.lines.Load() }

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "bench: %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}
