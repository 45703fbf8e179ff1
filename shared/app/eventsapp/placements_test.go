package eventsapp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

type keptPlacements struct {
	kept  map[string]gameinstance.GameSessionPlacement
	err   error
	asked []string
}

func (k *keptPlacements) Get(_ context.Context, id string) (gameinstance.GameSessionPlacement, error) {
	k.asked = append(k.asked, id)
	if k.err != nil {
		return gameinstance.GameSessionPlacement{}, k.err
	}
	if p, ok := k.kept[id]; ok {
		return p, nil
	}
	return gameinstance.GameSessionPlacement{}, gameinstance.ErrNotFound
}

// placement is a GameLift placement's transition.
func placement(id string, from, to gameinstance.State, mod func(*gameinstance.Record)) []eventcatalog.Event {
	return transition(id, false, from, to, func(r *gameinstance.Record) {
		r.Fingerprint.GameLift = "digest"
		if mod != nil {
			mod(r)
		}
	})
}

// The events that end a GameLift placement are followed by GameLift's own;
// no other event asks for the placement.
func TestPlacementEvents(t *testing.T) {
	timedOut := func(r *gameinstance.Record) {
		r.Failure = &gameinstance.Failure{Code: gameinstance.CodePlacementTimedOut}
	}
	kept := func() *keptPlacements {
		return &keptPlacements{kept: map[string]gameinstance.GameSessionPlacement{"pl-1": {ID: "pl-1"}}}
	}
	for _, tc := range []struct {
		name       string
		placements *keptPlacements
		evs        []eventcatalog.Event
		want       string
		err        bool
	}{
		{"fulfilled", kept(), placement("pl-1", gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			"GameServerAllocated pl-1,GameLift Queue Placement Event pl-1 PlacementFulfilled", false},
		{"timed out", kept(), placement("pl-1", gameinstance.StateQueued, gameinstance.StateFailed, timedOut),
			"AllocationFailed pl-1,GameLift Queue Placement Event pl-1 PlacementTimedOut", false},
		{"queued and linked: nothing more", kept(), append(placement("pl-1", gameinstance.StateAllocating, gameinstance.StateQueued, nil),
			placement("pl-1", gameinstance.StateAllocated, gameinstance.StateLinked, nil)...), "AllocationQueued pl-1,GameServerLinked pl-1", false},
		{"an API call's instance", kept(), transition("gi-1", false, gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			"GameServerAllocated gi-1", false},
		{"not kept: published without", &keptPlacements{}, placement("pl-1", gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			"GameServerAllocated pl-1", false},
		{"the store down", &keptPlacements{err: errors.New("throttled")}, placement("pl-1", gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			"", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := placementEvents(context.Background(), tc.placements, tc.evs)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v", err)
			}
			var got []string
			for _, e := range out {
				s := string(e.Type) + " " + e.Subject()
				if e.Placement != nil {
					s += " " + e.Placement.Type
				}
				got = append(got, s)
			}
			if strings.Join(got, ",") != tc.want {
				t.Fatalf("published %v, want %s", got, tc.want)
			}
		})
	}
}
