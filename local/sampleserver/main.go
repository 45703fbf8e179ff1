// Command sampleserver is a sample dedicated game server with the
// GameFabric allocation sidecar folded in: it registers with the
// allocator's registry, takes the allocation callback and writes the
// payload file (the sidecar's part); then, as a studio's server would, it
// reads that file, links back to the game backend, heartbeats, and ends the
// game when a player sends IWON (or the game runs too long, or it is told
// to stop), all through the game-server SDK, shared/gameserver.
//
// With ROOMS=N (2-256) it hosts up to N sessions at once: its first
// session offers the rooms when it links, the service sends the others to
// its session callback (SESSION_PORT, path /sessions), one heartbeat loop
// renews them all ({"allSessions": true}), and each ends on its own while
// the server keeps taking new ones until it is told to stop. Players then pick their session on the shared game port with
// JOIN <gameInstanceId> (lobby.go).
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
