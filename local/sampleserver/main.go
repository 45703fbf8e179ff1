// Command sampleserver is a sample game server with GameFabric's
// allocation sidecar folded in. As the sidecar, it registers with the
// Allocator's registry, takes the allocation callback and writes the
// payload file; then, as a studio's server would, it reads that file,
// links back to the game backend, heartbeats, and ends the game when a
// player sends IWON (or the game runs too long, or it is told to stop),
// all through the game-server SDK, shared/gameserver.
//
// With ROOMS=N (2-256) it hosts up to N sessions at once (rooms.go);
// players pick theirs on the shared game port with JOIN <gameInstanceId>.
//
// Configuration comes from the environment; see Config.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	cfg, err := configFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sampleserver:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "sampleserver:", err)
		stop()
		os.Exit(1)
	}
}
