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

	"github.com/gamefabric-alloc/allocsvc/local/dashboard"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

func main() {
	var m dashboard.MatchForm
	flag.IntVar(&m.Players, "players", stack.DefaultPlayers, "how many players were matched (1-200), one ticket each")
	flag.StringVar(&m.Near, "near", "", "the region the players report their lowest latencies to (default: the first region)")
	flag.Func("custom-event-data", `the configuration's customEventData (default: {"region":"<near>"})`, func(s string) error {
		m.CustomEventData = &s
		return nil
	})
	workDir := flag.String("workdir", ".cache/dev", "make dev's work dir, which holds its state file")
	timeout := flag.Duration("timeout", time.Minute, "how long to follow the match (bounds the whole command)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: make match [PLAYERS=4] [NEAR=eu-central-1]   (go run ./local/cmd/match -players 4 -near eu-central-1)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, os.Stdout, stack.StateFileOf(*workDir), m); err != nil {
		fmt.Fprintln(os.Stderr, "match:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, state string, m dashboard.MatchForm) error {
	st, err := stack.RunningDev(state)
	switch {
	case err != nil:
		return err
	case st.Dashboard == "":
		return errors.New("the running make dev predates make match (no dashboard in its state): restart it")
	}
	d := dashAPI{url: st.Dashboard}
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

// pollEvery is how often the match is looked at again.
const pollEvery = 500 * time.Millisecond

// follow prints the match's game instance as its state changes and each
// event published for it, until the event that says where its players
// connect (the match published again), its failure, or ctx's end.
func follow(ctx context.Context, w io.Writer, d dashAPI, id string) error {
	var f follower
	for {
		st, err := d.state(ctx)
		if err == nil {
			if done, err := f.show(w, st, id); done {
				return err
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("stopped following match %s: %w", id, err)
			}
			return fmt.Errorf("stopped following match %s while it is %s; the dashboard keeps showing it", id, f.state)
		case <-time.After(pollEvery):
		}
	}
}

// follower remembers what it printed.
type follower struct {
	state   apishape.State
	printed map[uint64]bool
}

// show prints what is new about match id in st; done is true once the
// match is placed and published again (err nil) or failed.
func (f *follower) show(w io.Writer, st dashboard.State, id string) (done bool, err error) {
	if f.printed == nil {
		f.printed = map[uint64]bool{}
	}
	var failure error
	for _, in := range st.Instances {
		if in.GameInstanceID != id || in.State == f.state {
			continue
		}
		f.state = in.State
		line := fmt.Sprintf("game instance %s is %s", id, in.State)
		if in.Region != "" {
			line += " in " + in.Region
		}
		if in.Server != nil {
			line += " on game server " + in.Server.Address
		}
		if in.Error != nil {
			line += fmt.Sprintf(" (%s: %s)", in.Error.Code, in.Error.Message)
			failure = fmt.Errorf("match %s was not placed: %s", id, in.Error.Code)
		}
		fmt.Fprintln(w, line)
	}
	published := false
	for i := len(st.Events) - 1; i >= 0; i-- { // oldest first
		e := st.Events[i]
		if e.GameInstanceID != id || f.printed[e.Seq] {
			continue
		}
		f.printed[e.Seq] = true
		fmt.Fprintln(w, e.Line)
		published = published || e.Address != ""
	}
	switch {
	case published:
		return true, nil
	case failure != nil:
		return true, failure
	case f.state == "Failed":
		return true, errors.New("match " + id + " failed")
	}
	return false, nil
}
