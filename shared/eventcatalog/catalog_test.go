package eventcatalog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func rec(state gameinstance.State, version int64, mod func(*gameinstance.Record)) *gameinstance.Record {
	r := &gameinstance.Record{GameInstanceID: "gi-1", State: state, Version: version, Region: "us-west",
		CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(version) * time.Second),
		PartnerGameTokenHash: "0123456789abcdef-token-hash", CandidateTokenHashes: []string{"candidate-hash"}, ClaimID: "claim-secret"}
	if mod != nil {
		mod(r)
	}
	return r
}

func TestFromGameInstance(t *testing.T) {
	orphan := func(r *gameinstance.Record) {
		r.FallbackUsed = true
		r.Attempts = []gameinstance.Attempt{
			{Region: "eu-central-1", Reason: "preferred", Error: "timeout", SuspectedOrphan: true, DurationMs: 4000},
			{Region: "us-west", Reason: "fallback", Status: 200, DurationMs: 20},
		}
	}
	queued := func(r *gameinstance.Record) {
		r.Queue = &gameinstance.Queue{StartedAt: r.CreatedAt, Until: r.CreatedAt.Add(time.Minute), Ticket: "t"}
	}
	tests := []struct {
		name     string
		old, cur *gameinstance.Record
		want     []string // detail-type idempotencyKey previousState→state
	}{
		{"claim is not an event", nil, rec(gameinstance.StateAllocating, 1, nil), nil},
		{"allocated", rec(gameinstance.StateAllocating, 1, nil), rec(gameinstance.StateAllocated, 2, nil),
			[]string{"GameServerAllocated gi-1:2:GameServerAllocated Allocating→Allocated"}},
		{"allocated after a timed-out region", rec(gameinstance.StateAllocating, 1, nil), rec(gameinstance.StateAllocated, 2, orphan),
			[]string{"GameServerAllocated gi-1:2:GameServerAllocated Allocating→Allocated", "SuspectedOrphan gi-1:2:SuspectedOrphan Allocating→Allocated"}},
		{"failed", rec(gameinstance.StateAllocating, 3, nil), rec(gameinstance.StateFailed, 4, func(r *gameinstance.Record) {
			r.Failure = &gameinstance.Failure{Code: gameinstance.CodeNoCapacity, Message: "no servers"}
		}), []string{"AllocationFailed gi-1:4:AllocationFailed Allocating→Failed"}},
		{"retry claim after failure", rec(gameinstance.StateFailed, 4, nil), rec(gameinstance.StateAllocating, 5, nil), nil},
		{"linked", rec(gameinstance.StateAllocated, 2, nil), rec(gameinstance.StateLinked, 3, nil),
			[]string{"GameServerLinked gi-1:3:GameServerLinked Allocated→Linked"}},
		{"heartbeat", rec(gameinstance.StateLinked, 3, nil), rec(gameinstance.StateLinked, 4, nil), nil},
		{"ended", rec(gameinstance.StateLinked, 9, nil), rec(gameinstance.StateEnded, 10, nil),
			[]string{"GameInstanceEnded gi-1:10:GameInstanceEnded Linked→Ended"}},
		{"link timeout", rec(gameinstance.StateAllocated, 2, nil), rec(gameinstance.StateUnhealthy, 3, nil),
			[]string{"GameInstanceUnhealthy gi-1:3:GameInstanceUnhealthy Allocated→Unhealthy"}},
		{"queued", rec(gameinstance.StateAllocating, 1, nil), rec(gameinstance.StateQueued, 2, queued),
			[]string{"AllocationQueued gi-1:2:AllocationQueued Allocating→Queued"}},
		{"a worker's claim is no event", rec(gameinstance.StateQueued, 2, queued), rec(gameinstance.StateAllocating, 3, queued), nil},
		{"queued again after an attempt is no event", rec(gameinstance.StateAllocating, 3, queued), rec(gameinstance.StateQueued, 4, queued), nil},
		{"cancelled", rec(gameinstance.StateQueued, 4, queued), rec(gameinstance.StateFailed, 5, func(r *gameinstance.Record) {
			queued(r)
			r.Failure = &gameinstance.Failure{Code: gameinstance.CodePlacementCancelled, Message: "cancelled"}
		}), []string{"AllocationFailed gi-1:5:AllocationFailed Queued→Failed"}},
		{"placed from the queue", rec(gameinstance.StateAllocating, 5, queued), rec(gameinstance.StateAllocated, 6, queued),
			[]string{"GameServerAllocated gi-1:6:GameServerAllocated Allocating→Allocated"}},
		{"orphans are reported only when the outcome is stored", rec(gameinstance.StateAllocated, 2, orphan), rec(gameinstance.StateLinked, 3, orphan),
			[]string{"GameServerLinked gi-1:3:GameServerLinked Allocated→Linked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range FromGameInstance(tt.old, *tt.cur) {
				d := e.Instance
				got = append(got, string(e.Type)+" "+e.Key()+" "+string(d.PreviousState)+"→"+string(d.State))
				if !e.Time.Equal(tt.cur.UpdatedAt) {
					t.Errorf("%s time %v, want the write's %v", e.Type, e.Time, tt.cur.UpdatedAt)
				}
				b, err := e.Detail()
				if err != nil {
					t.Fatal(err)
				}
				for _, secret := range []string{"token-hash", "candidate-hash", "claim-secret"} {
					if strings.Contains(string(b), secret) {
						t.Errorf("%s detail carries %q: %s", e.Type, secret, b)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestInstanceDetail(t *testing.T) {
	old := rec(gameinstance.StateAllocated, 2, nil)
	cur := rec(gameinstance.StateLinked, 3, func(r *gameinstance.Record) {
		r.LinkedAt = t0.Add(3 * time.Second)
		r.Server = &gameinstance.Server{Address: "10.0.0.1:7777", IP: "10.0.0.1", Ports: map[string]int{"game": 7777}}
		r.Attempts = []gameinstance.Attempt{{Region: "us-west", Status: 200, Body: "upstream body", Error: strings.Repeat("é", 2000)}}
	})
	evs := FromGameInstance(old, *cur)
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	b, _ := evs[0].Detail()
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"gameInstanceId": "gi-1", "version": 3.0, "state": "Linked", "previousState": "Allocated", "region": "us-west",
		"fallbackUsed": false, "allocatedAt": "2026-11-23T12:00:02Z", "linkedAt": "2026-11-23T12:00:03Z", "idempotencyKey": "gi-1:3:GameServerLinked"}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("detail %s = %v, want %v", k, d[k], v)
		}
	}
	if strings.Contains(string(b), "upstream body") {
		t.Error("upstream bodies stay out of events")
	}
	if e := evs[0].Instance.Attempts[0].Error; len(e) > MaxTextBytes || !strings.HasSuffix(e, "…") {
		t.Errorf("attempt error not bounded: %d bytes", len(e))
	}
}

// An instance placed in a room says so, and so does its callback attempt;
// one recorded before rooms existed was placed by the Allocator.
func TestInstanceDetailPlacement(t *testing.T) {
	server := &gameinstance.Server{Address: "10.0.0.1:7777", IP: "10.0.0.1", Ports: map[string]int{"game": 7777}}
	for _, tc := range []struct {
		name string
		mod  func(*gameinstance.Record)
		want string
	}{
		{"room", func(r *gameinstance.Record) {
			r.Server, r.Placement, r.RoomServer = server, gameinstance.PlacementRoom, server.Address
			r.Attempts = []gameinstance.Attempt{{Region: "us-west", Status: 200, Placement: gameinstance.PlacementRoom, Server: server.Address}}
		}, `"placement":"room"`},
		{"recorded before rooms", func(r *gameinstance.Record) { r.Server = server }, `"placement":"allocator"`},
	} {
		evs := FromGameInstance(rec(gameinstance.StateAllocating, 1, nil), *rec(gameinstance.StateAllocated, 2, tc.mod))
		b, _ := evs[0].Detail()
		if !strings.Contains(string(b), tc.want) || strings.Contains(string(b), "roomServer") {
			t.Errorf("%s: detail %s", tc.name, b)
		}
		if tc.name == "room" && !strings.Contains(string(b), `"placement":"room","server":"10.0.0.1:7777"`) {
			t.Errorf("the room attempt lost its placement: %s", b)
		}
	}
}

func TestFromRegion(t *testing.T) {
	h := func(s regionhealth.RegionState, since time.Time) *regionhealth.Health {
		return &regionhealth.Health{Region: "eu-central-1", State: s, Since: since, Reason: regionhealth.BecauseAllocationFailures,
			OpenUntil: since.Add(time.Minute), ConsecutiveFailures: 3}
	}
	tests := []struct {
		name     string
		old, cur *regionhealth.Health
		want     string
	}{
		{"first stored as Initialized is no change", nil, h(regionhealth.RegionInitialized, t0), ""},
		{"first stored as Deployed", nil, h(regionhealth.RegionDeployed, t0), "eu-central-1:Deployed:1795435200000 Initialized→Deployed"},
		{"breaker opens", h(regionhealth.RegionDeployed, t0), h(regionhealth.RegionUnhealthy, t0.Add(time.Second)),
			"eu-central-1:Unhealthy:1795435201000 Deployed→Unhealthy"},
		{"breaker re-opens after a failed probe", h(regionhealth.RegionUnhealthy, t0), h(regionhealth.RegionUnhealthy, t0.Add(time.Minute)), ""},
		{"success refreshes since", h(regionhealth.RegionDeployed, t0), h(regionhealth.RegionDeployed, t0.Add(time.Minute)), ""},
		{"recovers", h(regionhealth.RegionUnhealthy, t0), h(regionhealth.RegionDeployed, t0.Add(time.Hour)),
			"eu-central-1:Deployed:1795438800000 Unhealthy→Deployed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := FromRegion(tt.old, *tt.cur)
			got := ""
			for _, e := range evs {
				got = e.Key() + " " + string(e.Region.PreviousState) + "→" + string(e.Region.State)
				if e.Type != RegionHealthChanged {
					t.Errorf("type %s", e.Type)
				}
				if (e.Region.State == regionhealth.RegionUnhealthy) != (e.Region.Reason != "") {
					t.Errorf("reason %q in state %s", e.Region.Reason, e.Region.State)
				}
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
