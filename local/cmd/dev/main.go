// Command dev runs the whole product locally without Docker (`make dev`).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

func main() {
	configPath := flag.String("config", "local/dev.yaml", "stack configuration")
	workDir := flag.String("workdir", ".cache/dev", "where binaries, game server dirs and state go")
	flag.Parse()
	if err := run(*configPath, *workDir); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run(configPath, workDir string) error {
	cfg, err := stack.LoadConfig(configPath)
	if err != nil {
		return err
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(workDir) {
		workDir = filepath.Join(root, workDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	fmt.Fprintln(os.Stderr, "dev: building the functions and the sample server, starting DynamoDB Local, moto and the GameFabric emulator ...")
	s, err := stack.Start(startCtx, cfg, stack.Options{Root: root, WorkDir: workDir, Log: os.Stderr})
	if err != nil {
		return err
	}
	state := stack.StateFile(workDir)
	if err := stack.WriteState(state, s.State()); err != nil {
		fmt.Fprintln(os.Stderr, "dev: could not save state for `make invoke`:", err)
	}
	fmt.Print(banner(s, cfg))
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "\ndev: stopping game servers, functions and components ...")
	_ = os.Remove(state)
	return s.Close()
}

func banner(s *stack.Stack, cfg stack.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n=== GameFabric allocation service, running locally ===\n\n")
	fmt.Fprintf(&b, "HTTP API            %s   (NO IAM auth locally; deployed, the allocation routes need SigV4)\n", s.APIURL)
	for _, r := range s.Template.HTTPRoutes() {
		fmt.Fprintf(&b, "  %-7s %-45s -> %s\n", r.Method, r.Path, r.FunctionLogicalID)
	}
	for _, sch := range s.Schedules {
		fmt.Fprintf(&b, "schedule            %-18s -> %s\n", sch.Expression, sch.FunctionLogicalID)
	}
	fmt.Fprintf(&b, "GameFabric emulator %s   (allocate: /%s, registry: /%s, ping: /%s)\n", s.EmulatorURL, stack.AllocatePath, stack.RegistryPath, stack.PingPath)
	fmt.Fprintf(&b, "DynamoDB Local      %s   tables: %s\n", s.DynamoDB, strings.Join(sortedValues(s.Tables), ", "))
	fmt.Fprintf(&b, "Secrets Manager     %s   (moto) %s\n", s.SecretsManager, s.SecretARN)
	var regions []string
	for region, procs := range cfg.Fleet.Regions {
		n := 0
		for _, p := range procs {
			n += p.ConcurrentExecutions
		}
		regions = append(regions, fmt.Sprintf("%s: %d", region, n))
	}
	sort.Strings(regions)
	fmt.Fprintf(&b, "game servers        %s\n\n", strings.Join(regions, ", "))
	fmt.Fprintf(&b, "Try:\n")
	fmt.Fprintf(&b, "  curl -s -X POST %s/v1/allocations -H 'content-type: application/json' \\\n", s.APIURL)
	fmt.Fprintf(&b, "       -d '{\"gameInstanceId\":\"gi-1\",\"desiredRegion\":\"us-west\",\"gameServerVersion\":\"prag::sample-game-armada-set\"}'\n")
	fmt.Fprintf(&b, "  curl -s %s/v1/allocations/gi-1\n", s.APIURL)
	fmt.Fprintf(&b, "  curl -s %s/v1/regions\n\n", s.APIURL)
	fmt.Fprintf(&b, "Then end the game like a player would: echo IWON | nc <server ip> <server port> (from the allocation's \"server\").\n")
	fmt.Fprintf(&b, "Ctrl-C stops everything.\n")
	return b.String()
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
