// Command dev runs the whole product locally without Docker (`make dev`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/dashboard"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

func main() {
	configPath := flag.String("config", "local/dev.yaml", "stack configuration")
	workDir := flag.String("workdir", ".cache/dev", "where binaries, game server dirs and state go")
	drain := flag.String("drain", "", "run Regions' Allocators dry for a while, to watch queued placements wait: "+
		"us-west:20s (once the stack is up), us-west:20s/1m (every minute), comma-separated; added to dev.yaml's gamefabric.drain")
	flag.Parse()
	if err := run(*configPath, *workDir, *drain); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run(configPath, workDir, drain string) error {
	cfg, err := stack.LoadConfig(configPath)
	if err != nil {
		return err
	}
	if err := cfg.AddDrains(drain); err != nil {
		return fmt.Errorf("-drain: %w", err)
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
	fmt.Fprintln(os.Stderr, "dev: building the functions and the sample server, starting DynamoDB Local, moto and the emulated GameFabric Allocators and Ping Service ...")
	s, err := stack.Start(startCtx, cfg, stack.Options{Root: root, WorkDir: workDir, Log: os.Stderr})
	if err != nil {
		return err
	}
	dash, err := dashboard.Start(s, cfg.Dashboard.Port)
	if err != nil {
		return errors.Join(err, s.Close())
	}
	state := stack.StateFile(workDir)
	st := s.State()
	st.Dashboard = dash.URL
	if err := stack.WriteState(state, st); err != nil {
		fmt.Fprintln(os.Stderr, "dev: could not save state for `make invoke`, `make play` and `make match`:", err)
	}
	fmt.Print(banner(s, cfg, dash.URL))
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "\ndev: stopping game servers, functions and components ...")
	_ = os.Remove(state)
	return errors.Join(dash.Close(), s.Close())
}
