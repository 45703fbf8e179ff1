// Command match plays GameLift FlexMatch finding a match against the
// running `make dev` stack (`make match PLAYERS=4`): through the dashboard's
// API it puts a standalone MatchmakingSucceeded event on the local default
// bus, with the players' tickets in the GameLift stand-in, and follows the
// match: its game instance (named by the matchId), placed by
// MatchmakingFunction, and the events published for it, down to
// GameFabricMatchmakingSucceeded with the game server's address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

func main() {
	var m request
	flag.IntVar(&m.Players, "players", stack.DefaultPlayers, "how many players were matched (1-200), one ticket each")
	flag.StringVar(&m.Near, "near", "", "the region the players report their lowest latencies to (default: the first region)")
	custom := flag.String("custom-event-data", "", `the configuration's customEventData (default: {"region":"<near>"})`)
	workDir := flag.String("workdir", ".cache/dev", "make dev's work dir, which holds its state file")
	timeout := flag.Duration("timeout", time.Minute, "how long to follow the match (bounds the whole command)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: make match [PLAYERS=4] [NEAR=eu-central-1]   (go run ./local/cmd/match -players 4 -near eu-central-1)")
		os.Exit(2)
	}
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "custom-event-data" {
			m.CustomEventData = custom
		}
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, os.Stdout, stack.StateFileOf(*workDir), m); err != nil {
		fmt.Fprintln(os.Stderr, "match:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, state string, m request) error {
	st, err := stack.RunningDev(state)
	switch {
	case err != nil:
		return err
	case st.Dashboard == "":
		return errors.New("the running make dev predates make match (no dashboard in its state): restart it")
	}
	d := dashboard{url: st.Dashboard}
	id, msg, err := d.play(ctx, m)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, msg)
	if err := follow(ctx, w, d, id); err != nil {
		return err
	}
	fmt.Fprintf(w, "make play ID=%s ends its game, as a player would.\n", id)
	return nil
}
