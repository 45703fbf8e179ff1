package lifecycle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// One heartbeat renews every Linked session on the caller's server with one
// write of the server's record (each session's read then shows the beat),
// and reports the others as they are; sessions not on that server are left
// alone, whatever the server's record lists.
func TestHeartbeatSessions(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	linkedAt := now.Add(-10 * time.Minute)
	session := func(id string, state gameinstance.State, server string, beat time.Time) gameinstance.Record {
		r := allocated(id, gameinstance.PlacementRoom, server)
		r.State, r.LinkedAt, r.LastHeartbeatAt, r.Version = state, linkedAt, beat, 3
		return r
	}
	stale := now.Add(-DefaultPolicy.Period)     // due
	fresh := now.Add(-DefaultPolicy.Period / 3) // not due
	elsewhere := "198.51.100.7:7777"            // a session that moved on
	tests := []struct {
		name        string
		caller      gameinstance.Record
		token       string
		readFirst   bool
		failOn      string // the store fails on this session
		wantCode    gameinstance.Code
		wantOthers  map[string]gameinstance.State
		wantWritten []string // the session records written (the caller's own heartbeat)
		wantBeat    bool     // the server's record took the beat
	}{
		// Behind the function URL servers beat once a Period: the caller's
		// record is written without a read, and the server's.
		{name: "write first: the caller and the server", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-1",
			wantOthers:  map[string]gameinstance.State{"gi-2": gameinstance.StateLinked, "gi-3": gameinstance.StateEnded, "gi-5": gameinstance.StateLinked},
			wantWritten: []string{"gi-1"}, wantBeat: true},
		{name: "read first: the caller due", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-1", readFirst: true,
			wantOthers:  map[string]gameinstance.State{"gi-2": gameinstance.StateLinked, "gi-3": gameinstance.StateEnded, "gi-5": gameinstance.StateLinked},
			wantWritten: []string{"gi-1"}, wantBeat: true},
		{name: "the caller not due: the server still beats", caller: session("gi-1", gameinstance.StateLinked, roomAddress, fresh), token: "tok-gi-1", readFirst: true,
			wantOthers: map[string]gameinstance.State{"gi-2": gameinstance.StateLinked, "gi-3": gameinstance.StateEnded, "gi-5": gameinstance.StateLinked},
			wantBeat:   true},
		{name: "wrong token: nothing renewed", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-2",
			wantCode: gameinstance.CodeUnauthorized},
		{name: "an Unhealthy caller renews nobody", caller: session("gi-1", gameinstance.StateUnhealthy, roomAddress, stale), token: "tok-gi-1"},
		{name: "a dedicated caller: its own heartbeat", caller: session("gi-1", gameinstance.StateLinked, "", stale), token: "tok-gi-1",
			wantWritten: []string{"gi-1"}},
		{name: "a store failure reading another: retry the call", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-1",
			failOn: "gi-2", wantCode: gameinstance.CodeUnavailable, wantWritten: []string{"gi-1"}, wantBeat: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeStore(1)
			for _, r := range []gameinstance.Record{tc.caller,
				session("gi-2", gameinstance.StateLinked, roomAddress, stale),
				session("gi-3", gameinstance.StateEnded, roomAddress, stale),
				session("gi-4", gameinstance.StateLinked, elsewhere, stale),
				session("gi-5", gameinstance.StateLinked, roomAddress, fresh)} {
				f.recs[r.GameInstanceID] = r
			}
			// gi-4 is listed but holds its room elsewhere; gi-6 has no record.
			f.servers = map[string]*fakeServer{roomAddress: {capacity: 8, accepting: true,
				sessions: map[string]bool{"gi-1": true, "gi-2": true, "gi-3": true, "gi-4": true, "gi-5": true, "gi-6": true}}}
			if tc.failOn != "" {
				f.healthErr[tc.failOn] = errStoreDown
			}
			svc := &Service{Store: f, Policy: DefaultPolicy, Now: func() time.Time { return now }, Rooms: true, ReadBeforeHeartbeat: tc.readFirst}
			rec, others, err := svc.HeartbeatSessions(context.Background(), "gi-1", tc.token)
			if gameinstance.CodeOf(err) != tc.wantCode && !(tc.wantCode == "" && err == nil) {
				t.Fatalf("err = %v, want code %q", err, tc.wantCode)
			}
			if err == nil && rec.GameInstanceID != "gi-1" {
				t.Errorf("answered %q, want the caller's record", rec.GameInstanceID)
			}
			got := map[string]gameinstance.State{}
			for _, o := range others {
				got[o.GameInstanceID] = o.State
			}
			if len(got) != len(tc.wantOthers) {
				t.Errorf("others = %v, want %v", got, tc.wantOthers)
			}
			for id, st := range tc.wantOthers {
				if got[id] != st {
					t.Errorf("%s = %q, want %q", id, got[id], st)
				}
			}
			written := map[string]bool{}
			for _, id := range tc.wantWritten {
				written[id] = true
			}
			if beat := f.servers[roomAddress].beatAt.Equal(now); beat != tc.wantBeat {
				t.Errorf("server beat = %v, want %v", beat, tc.wantBeat)
			}
			for id, r := range f.recs {
				if wrote := r.Version != 3; wrote != written[id] {
					t.Errorf("%s written = %v, want %v", id, wrote, written[id])
				}
				// As the sweep and GET read it: the server's beat counts for
				// every Linked session holding a room there, not elsewhere.
				read, err := f.Get(context.Background(), id)
				renewed := written[id] || (tc.wantBeat && r.State == gameinstance.StateLinked && r.RoomServer == roomAddress)
				if err != nil || read.LastHeartbeatAt.Equal(now) != renewed {
					t.Errorf("%s read with heartbeat at %v (%v), want renewed %v", id, read.LastHeartbeatAt, err, renewed)
				}
			}
		})
	}
}

// Sessions on a rooms server heartbeat through the server's record alone:
// the sweep, warm or cold, leaves them while the server beats for them all
// and marks each at the first run past the server's last beat's deadline,
// while a session on another server, whose record nobody beats for, is
// marked at its own.
func TestSweepCountsTheServersBeatForItsSessions(t *testing.T) {
	p := DefaultPolicy
	linkedAt := sweepT0.Add(-10 * time.Second)
	for _, warm := range []bool{true, false} {
		t.Run(fmt.Sprintf("warm=%v", warm), func(t *testing.T) {
			f := newFakeStore(2)
			f.servers = map[string]*fakeServer{roomAddress: {capacity: 4, sessions: map[string]bool{}}, "198.51.100.7:7777": {capacity: 4, sessions: map[string]bool{}}}
			onServer := map[string]string{"s-1": roomAddress, "s-2": roomAddress, "s-3": roomAddress, "other": "198.51.100.7:7777"}
			for id, server := range onServer {
				r := allocated(id, gameinstance.PlacementRoom, server)
				r.State, r.LinkedAt, r.UpdatedAt = gameinstance.StateLinked, linkedAt, linkedAt
				r.HealthDeadline = linkedAt.Add(p.InitialDelay + p.Period*time.Duration(p.FailureThreshold))
				f.recs[id] = r
				f.shards[len(id)%2] = append(f.shards[len(id)%2], id)
				f.servers[server].sessions[id] = true
			}
			stop := sweepT0.Add(9*time.Minute + 5*time.Second) // the server's last beat is before this
			s := fakeService(f, sweepT0)
			marked := map[string]time.Time{}
			for m := range 16 {
				now := sweepT0.Add(time.Duration(m) * time.Minute)
				for at := now.Add(-time.Minute).Add(p.Period); !at.After(now); at = at.Add(p.Period) {
					if at.Before(stop) {
						if _, err := f.BeatServer(context.Background(), roomAddress, "s-1", at); err != nil {
							t.Fatal(err)
						}
					}
				}
				if !warm {
					s = fakeService(f, now)
				}
				s.Now = func() time.Time { return now }
				if _, err := s.sweep(quiet(context.Background()), sweepLimits{capacity: 1000, workers: 4, minMargin: time.Second}); err != nil {
					t.Fatal(err)
				}
				for id := range onServer {
					if _, done := marked[id]; !done && f.state(id) == gameinstance.StateUnhealthy {
						marked[id] = now
					}
				}
			}
			lastBeat := f.servers[roomAddress].beatAt
			for id, server := range onServer {
				from := lastBeat
				if server != roomAddress {
					from = linkedAt.Add(p.InitialDelay)
				}
				deadline := from.Add(p.Period * time.Duration(p.FailureThreshold))
				if at, ok := marked[id]; !ok || at.Before(deadline) || !at.Before(deadline.Add(time.Minute)) {
					t.Errorf("%s marked at %v (%v), want the first run past %v", id, at, ok, deadline)
				}
			}
		})
	}
}
