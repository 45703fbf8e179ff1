package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// One heartbeat renews every Linked session on the caller's server, and
// reports the others as they are; sessions not on that server are left
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
		wantWritten []string
	}{
		// Behind the function URL servers beat once a Period: every Linked
		// session is written at once, without a read.
		{name: "write first: every Linked session on the server", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-1",
			wantOthers:  map[string]gameinstance.State{"gi-2": gameinstance.StateLinked, "gi-3": gameinstance.StateEnded, "gi-5": gameinstance.StateLinked},
			wantWritten: []string{"gi-1", "gi-2", "gi-5"}},
		{name: "read first: only the due ones are written", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-1", readFirst: true,
			wantOthers:  map[string]gameinstance.State{"gi-2": gameinstance.StateLinked, "gi-3": gameinstance.StateEnded, "gi-5": gameinstance.StateLinked},
			wantWritten: []string{"gi-1", "gi-2"}},
		{name: "the caller not due: the others still are", caller: session("gi-1", gameinstance.StateLinked, roomAddress, fresh), token: "tok-gi-1", readFirst: true,
			wantOthers:  map[string]gameinstance.State{"gi-2": gameinstance.StateLinked, "gi-3": gameinstance.StateEnded, "gi-5": gameinstance.StateLinked},
			wantWritten: []string{"gi-2"}},
		{name: "wrong token: nothing renewed", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-2",
			wantCode: gameinstance.CodeUnauthorized},
		{name: "an Unhealthy caller renews nobody", caller: session("gi-1", gameinstance.StateUnhealthy, roomAddress, stale), token: "tok-gi-1"},
		{name: "a dedicated caller: its own heartbeat", caller: session("gi-1", gameinstance.StateLinked, "", stale), token: "tok-gi-1",
			wantWritten: []string{"gi-1"}},
		{name: "a store failure on another: retry the call", caller: session("gi-1", gameinstance.StateLinked, roomAddress, stale), token: "tok-gi-1",
			failOn: "gi-2", wantCode: gameinstance.CodeUnavailable, wantWritten: []string{"gi-1", "gi-5"}},
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
				f.getErr[tc.failOn] = errStoreDown
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
			for id, r := range f.recs {
				if wrote := r.Version != 3; wrote != written[id] {
					t.Errorf("%s written = %v, want %v", id, wrote, written[id])
				}
				if written[id] && !r.LastHeartbeatAt.Equal(now) {
					t.Errorf("%s heartbeat at %v, want %v", id, r.LastHeartbeatAt, now)
				}
			}
		})
	}
}
