// Command match plays GameLift FlexMatch finding a match against the
// running `make dev` stack (`make match PLAYERS=4`): through the dashboard's
// API it puts a standalone MatchmakingSucceeded event on the local default
// bus, with the players' tickets in the GameLift stand-in, and follows the
// match: its game instance (named by the matchId), placed by
// MatchmakingFunction, and the events published for it, down to
// GameFabricMatchmakingSucceeded with the game server's address.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
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
	var state apishape.State
	printed := map[uint64]bool{}
	for {
		st, err := d.state(ctx) // unread, st is empty: nothing new
		var failure error
		for _, in := range st.Instances {
			if in.GameInstanceID != id || in.State == state {
				continue
			}
			state = in.State
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
			if e.GameInstanceID != id || printed[e.Seq] {
				continue
			}
			printed[e.Seq] = true
			fmt.Fprintln(w, e.Line)
			published = published || e.Address != ""
		}
		switch {
		case published:
			return nil
		case failure != nil:
			return failure
		case state == "Failed":
			return errors.New("match " + id + " failed")
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("stopped following match %s: %w", id, err)
			}
			return fmt.Errorf("stopped following match %s while it is %s; the dashboard keeps showing it", id, state)
		case <-time.After(pollEvery):
		}
	}
}

// dashAPI is make dev's dashboard API, which plays the match and shows
// the stack's state.
type dashAPI struct{ url string }

var client = &http.Client{Timeout: 15 * time.Second}

// maxAnswer bounds what is read of an answer (the state lists at most 100
// instances and 100 events).
const maxAnswer = 4 << 20

// play asks the dashboard to play a match; it returns the match's id and
// the dashboard's message.
func (d dashAPI) play(ctx context.Context, m dashboard.MatchForm) (id, msg string, err error) {
	var ans dashboard.Answer
	status, err := d.call(ctx, "api/match", m, &ans)
	switch {
	case err != nil:
		return "", "", err
	case !ans.OK || ans.GameInstanceID == "":
		return "", "", fmt.Errorf("the dashboard answered %d: %s", status, ans.Message)
	}
	return ans.GameInstanceID, ans.Message, nil
}

func (d dashAPI) state(ctx context.Context) (dashboard.State, error) {
	var st dashboard.State
	status, err := d.call(ctx, "api/state", nil, &st)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("the dashboard's state answered %d", status)
	}
	return st, err
}

// call GETs path, or POSTs body as JSON, and reads the JSON answer into into.
func (d dashAPI) call(ctx context.Context, path string, body, into any) (int, error) {
	method, payload := http.MethodGet, []byte(nil)
	if body != nil {
		method = http.MethodPost
		payload, _ = json.Marshal(body) // a form always encodes
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(d.url, "/")+"/"+path, bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("the dashboard does not answer (is make dev still running?): %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		return resp.StatusCode, errors.New("the dashboard's answer is unreadable: " + err.Error())
	}
	return resp.StatusCode, nil
}
