// Command play ends a game instance of the running `make dev` stack the way
// its player would: it sends IWON to the game port of the instance's game
// server, which then ends the game through the API (`make play ID=gi-1`).
// On a server hosting several sessions (rooms) it joins that instance's
// session first, and the others play on.
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

	"github.com/gamefabric-alloc/allocsvc/local/player"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

func main() {
	id := flag.String("id", "", "the gameInstanceId whose game to end (or the one argument)")
	workDir := flag.String("workdir", ".cache/dev", "make dev's work dir, which holds its state file")
	timeout := flag.Duration("timeout", 30*time.Second, "bound on the whole command")
	flag.Parse()
	if *id == "" && flag.NArg() == 1 {
		*id = flag.Arg(0)
	}
	if *id == "" || flag.NArg() > 1 {
		fmt.Fprintln(os.Stderr, "usage: make play ID=<gameInstanceId>   (go run ./local/cmd/play -id <gameInstanceId>)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, os.Stdout, stack.StateFileOf(*workDir), *id); err != nil {
		fmt.Fprintln(os.Stderr, "play:", err)
		os.Exit(1)
	}
}

// endedWithin bounds the wait for the record to say Ended once the server
// answered: it answers GAME OVER only after the backend recorded the end.
const endedWithin = 10 * time.Second

func run(ctx context.Context, w io.Writer, state, id string) error {
	st, err := stack.RunningDev(state)
	if err != nil {
		return err
	}
	api, err := allocclient.New(allocclient.Options{BaseURL: st.APIURL})
	if err != nil {
		return fmt.Errorf("make dev's state names no usable API URL: %w", err)
	}
	inst, err := get(ctx, api, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s is %s%s\n", id, inst.State, where(inst))
	addr, err := player.Target(inst)
	if err != nil {
		return err
	}
	out, err := player.SendIWONFor(ctx, addr, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sent IWON to %s (it said %q)", addr, out.Welcome)
	if out.GameOver {
		fmt.Fprint(w, "; it answered GAME OVER")
	}
	fmt.Fprintln(w)
	return awaitEnded(ctx, w, api, id)
}

// get reads a game instance; its errors say what a person at the terminal
// can do.
func get(ctx context.Context, api *allocclient.Client, id string) (*allocclient.Allocation, error) {
	inst, err := api.Get(ctx, id)
	var e *allocclient.Error
	switch {
	case allocclient.IsCode(err, allocclient.CodeNotFound):
		return nil, fmt.Errorf("no game instance %q in the running stack: allocate one first (the dashboard, or POST /v1/allocations)", id)
	case errors.As(err, &e):
		return nil, fmt.Errorf("GET /v1/allocations/%s: %w", id, err)
	case err != nil:
		return nil, fmt.Errorf("the local API does not answer (is make dev still running?): %w", err)
	}
	return inst, nil
}

// awaitEnded reports the record's final state, polling briefly.
func awaitEnded(ctx context.Context, w io.Writer, api *allocclient.Client, id string) error {
	ctx, cancel := context.WithTimeout(ctx, endedWithin)
	defer cancel()
	for {
		inst, err := get(ctx, api, id)
		if err == nil && inst.State == allocclient.StateEnded {
			fmt.Fprintf(w, "%s is Ended (endReason %s)\n", id, inst.EndReason)
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("the game server took the win, but reading %s back failed: %w", id, err)
			}
			return fmt.Errorf("the game server took the win, but %s is still %s after %s", id, inst.State, endedWithin)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func where(a *allocclient.Allocation) string {
	if a.Region == "" {
		return ""
	}
	s := " in " + a.Region
	if a.Server != nil {
		s += " on game server " + a.Server.Address
	}
	return s
}
