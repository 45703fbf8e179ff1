package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// pollEvery is how often the match is looked at again.
const pollEvery = 500 * time.Millisecond

// follow prints the match's game instance as its state changes and each
// event published for it, until the event that says where its players
// connect (the match published again), its failure, or ctx's end.
func follow(ctx context.Context, w io.Writer, d dashboard, id string) error {
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
	state   string
	printed map[uint64]bool
}

// show prints what is new about match id in st; done is true once the
// match is placed and published again (err nil) or failed.
func (f *follower) show(w io.Writer, st state, id string) (done bool, err error) {
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
