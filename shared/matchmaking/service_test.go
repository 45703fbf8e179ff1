package matchmaking

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// fakeAllocations stands in for allocation.Service: Get answers from
// existing (NOT_FOUND without it) or getErr, Allocate with allocErr,
// Reject with rejectErr; every call is recorded.
type fakeAllocations struct {
	mu        sync.Mutex
	existing  *gameinstance.Record
	getErr    error
	allocErr  error
	rejectErr error
	requests  []allocation.Request
	rejected  []gameinstance.Failure
	rejectIDs []string
}

func (f *fakeAllocations) Get(_ context.Context, id string) (gameinstance.Record, error) {
	switch {
	case f.getErr != nil:
		return gameinstance.Record{}, f.getErr
	case f.existing != nil:
		return *f.existing, nil
	}
	return gameinstance.Record{}, &gameinstance.Error{Code: gameinstance.CodeNotFound, Message: "no allocation for " + id}
}

func (f *fakeAllocations) AllocateMatch(_ context.Context, req allocation.Request) (allocation.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	if f.allocErr != nil {
		return allocation.Result{}, f.allocErr
	}
	return allocation.Result{Created: true, Record: gameinstance.Record{GameInstanceID: req.GameInstanceID, State: gameinstance.StateAllocated}}, nil
}

func (f *fakeAllocations) Reject(_ context.Context, id string, fl gameinstance.Failure) (gameinstance.Record, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rejectIDs, f.rejected = append(f.rejectIDs, id), append(f.rejected, fl)
	if f.rejectErr != nil {
		return gameinstance.Record{}, false, f.rejectErr
	}
	return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateFailed, Failure: &fl}, true, nil
}

type fakeMatches struct {
	kept []gameinstance.Match
	err  error
}

func (f *fakeMatches) Keep(_ context.Context, m gameinstance.Match) error {
	if f.err != nil {
		return f.err
	}
	f.kept = append(f.kept, m)
	return nil
}

func code(c gameinstance.Code) error {
	return &gameinstance.Error{Code: c, Message: string(c) + " said the fake"}
}

var outage = errors.New("dial tcp 127.0.0.1:8000: connect: connection refused")

func TestHandle(t *testing.T) {
	// withTickets is a match of n tickets whose players are 30 ms from
	// custom-us-west and 80 ms from eu, as DescribeMatchmaking reads them.
	withTickets := func(n int) (*fakeTickets, []byte) {
		ev := standalone(n)
		f := &fakeTickets{players: map[string][]allocation.PlayerLatency{}}
		for _, tk := range detailOf(ev)["tickets"].([]any) {
			id := tk.(map[string]any)["ticketId"].(string)
			f.players[id] = []allocation.PlayerLatency{{PlayerID: "p-" + id, LatencyMs: map[string]float64{"custom-us-west": 30, "eu": 80}}}
		}
		return f, encode(t, ev)
	}
	twoPlayers := encode(t, standalone(2))
	tooLarge := encode(t, standalone(201))
	badCustom := func() []byte {
		ev := standalone(2)
		detailOf(ev)["customEventData"] = `{"regoin":"eu"}`
		return encode(t, ev)
	}()
	versioned := func() []byte {
		ev := standalone(2)
		detailOf(ev)["customEventData"] = `{"region":"us-east","attributes":{"env":"prod","armadaset":"arena"}}`
		return encode(t, ev)
	}()

	type outcome struct {
		err      error // errors.Is; nil = none
		anyErr   bool  // some error that is not ErrNotAMatch
		kept     int
		requests int
		rejected gameinstance.Code
		// quiet: nothing logged above Info (another copy of the event
		// handling the match is no problem).
		quiet bool
	}
	for _, tc := range []struct {
		name    string
		event   []byte
		allocs  *fakeAllocations
		matches *fakeMatches
		tickets *fakeTickets
		want    outcome
		check   func(t *testing.T, req allocation.Request)
	}{
		{"not a match", []byte(`{"source":"aws.gamelift"}`), &fakeAllocations{}, &fakeMatches{}, nil, outcome{err: ErrNotAMatch}, nil},
		{"a match with a record is done with: no allocation, nothing kept",
			twoPlayers, &fakeAllocations{existing: &gameinstance.Record{GameInstanceID: matchID, State: gameinstance.StateAllocating}}, &fakeMatches{}, nil,
			outcome{}, nil},
		{"a record that cannot be read: retried", twoPlayers, &fakeAllocations{getErr: code(gameinstance.CodeUnavailable)}, &fakeMatches{}, nil,
			outcome{anyErr: true}, nil},
		{"a match that cannot be kept: retried, not allocated", twoPlayers, &fakeAllocations{}, &fakeMatches{err: outage}, nil,
			outcome{err: outage}, nil},
		{"too large: kept (its tickets) and rejected", tooLarge, &fakeAllocations{}, &fakeMatches{}, nil,
			outcome{kept: 1, rejected: gameinstance.CodeMatchTooLarge}, nil},
		{"a bad customEventData: rejected", badCustom, &fakeAllocations{}, &fakeMatches{}, nil,
			outcome{kept: 1, rejected: gameinstance.CodeInvalidMatch}, nil},
		{"a rejection not recorded: retried", badCustom, &fakeAllocations{rejectErr: code(gameinstance.CodeUnavailable)}, &fakeMatches{}, nil,
			outcome{kept: 1, anyErr: true, rejected: gameinstance.CodeInvalidMatch}, nil},
		{"placed as an API call would be", versioned, &fakeAllocations{}, &fakeMatches{}, nil, outcome{kept: 1, requests: 1},
			func(t *testing.T, req allocation.Request) {
				if req.GameInstanceID != matchID || req.GameServerVersion != "prod::arena" ||
					req.QueueTimeoutSeconds == nil || *req.QueueTimeoutSeconds != 60 {
					t.Fatalf("request %+v", req)
				}
				if req.DesiredRegion != "us-east" || req.PlayerLatencies != nil {
					t.Fatalf("without Tickets the region is customEventData's: %q, %v", req.DesiredRegion, req.PlayerLatencies)
				}
			}},
		{"the players' latencies rank the regions", nil, &fakeAllocations{}, &fakeMatches{}, nil, outcome{kept: 1, requests: 1},
			func(t *testing.T, req allocation.Request) {
				if len(req.PlayerLatencies) != 23 || req.DesiredRegion != "" {
					t.Fatalf("%d players' latencies, desired region %q; want 23 and none", len(req.PlayerLatencies), req.DesiredRegion)
				}
				if !reflect.DeepEqual(req.PlayerLatencies[0].LatencyMs, map[string]float64{"custom-us-west": 30, "eu": 80}) {
					t.Fatalf("latencies %v", req.PlayerLatencies[0].LatencyMs)
				}
			}},
		{"tickets failing: customEventData.region", twoPlayers, &fakeAllocations{}, &fakeMatches{}, &fakeTickets{failOn: 1}, outcome{kept: 1, requests: 1},
			func(t *testing.T, req allocation.Request) {
				if req.DesiredRegion != "eu" || req.PlayerLatencies != nil {
					t.Fatalf("desired region %q, latencies %v", req.DesiredRegion, req.PlayerLatencies)
				}
			}},
		{"tickets without latencies: customEventData.region", twoPlayers, &fakeAllocations{}, &fakeMatches{}, &fakeTickets{}, outcome{kept: 1, requests: 1},
			func(t *testing.T, req allocation.Request) {
				if req.DesiredRegion != "eu" || len(req.PlayerLatencies) != 0 {
					t.Fatalf("desired region %q, latencies %v", req.DesiredRegion, req.PlayerLatencies)
				}
			}},
		{"INVALID_REQUEST: the match is invalid", twoPlayers, &fakeAllocations{allocErr: code(gameinstance.CodeInvalidRequest)}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1, rejected: gameinstance.CodeInvalidMatch}, nil},
		{"ALLOCATION_IN_PROGRESS: another copy has it", twoPlayers, &fakeAllocations{allocErr: code(gameinstance.CodeAllocationInProgress)}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1, quiet: true}, nil},
		{"IDEMPOTENCY_MISMATCH: another copy's record", twoPlayers, &fakeAllocations{allocErr: code(gameinstance.CodeIdempotencyMismatch)}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1, quiet: true}, nil},
		{"SERVICE_UNAVAILABLE: retried", twoPlayers, &fakeAllocations{allocErr: code(gameinstance.CodeUnavailable)}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1, anyErr: true}, nil},
		{"INTERNAL: retried", twoPlayers, &fakeAllocations{allocErr: code(gameinstance.CodeInternal)}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1, anyErr: true}, nil},
		{"an error of no code: retried", twoPlayers, &fakeAllocations{allocErr: outage}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1, err: outage}, nil},
		{"NO_CAPACITY: its Failed record tells the players", twoPlayers, &fakeAllocations{allocErr: code(gameinstance.CodeNoCapacity)}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1}, nil},
		{"PLACEMENT_TIMED_OUT: its Failed record tells the players", twoPlayers, &fakeAllocations{allocErr: code(gameinstance.CodePlacementTimedOut)}, &fakeMatches{}, nil,
			outcome{kept: 1, requests: 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &Service{Allocations: tc.allocs, Matches: tc.matches, TicketsTimeout: time.Second, QueueTimeout: time.Minute}
			if tc.tickets != nil {
				svc.Tickets = tc.tickets
			}
			event := tc.event
			if event == nil {
				f, raw := withTickets(23)
				svc.Tickets, event = f, raw
			}
			var logs bytes.Buffer
			ctx := logging.WithLogger(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)))
			err := svc.Handle(ctx, event)
			switch w := tc.want; {
			case w.err != nil && !errors.Is(err, w.err):
				t.Fatalf("err = %v, want %v", err, w.err)
			case w.anyErr && (err == nil || errors.Is(err, ErrNotAMatch)):
				t.Fatalf("err = %v, want one worth retrying the event for", err)
			case w.err == nil && !w.anyErr && err != nil:
				t.Fatalf("err = %v, want nil: the event is done with", err)
			}
			if len(tc.matches.kept) != tc.want.kept || len(tc.allocs.requests) != tc.want.requests {
				t.Fatalf("%d kept, %d allocations; want %d and %d", len(tc.matches.kept), len(tc.allocs.requests), tc.want.kept, tc.want.requests)
			}
			if tc.want.kept > 0 && (tc.matches.kept[0].ID != matchID || len(tc.matches.kept[0].TicketIDs) == 0) {
				t.Fatalf("kept %+v", tc.matches.kept[0])
			}
			switch {
			case tc.want.rejected == "" && len(tc.allocs.rejected) > 0:
				t.Fatalf("rejected %+v", tc.allocs.rejected)
			case tc.want.rejected != "" && (len(tc.allocs.rejected) != 1 || tc.allocs.rejected[0].Code != tc.want.rejected ||
				tc.allocs.rejected[0].Message == "" || tc.allocs.rejectIDs[0] != matchID):
				t.Fatalf("rejected %v %+v, want %s of %s", tc.allocs.rejectIDs, tc.allocs.rejected, tc.want.rejected, matchID)
			}
			if tc.check != nil {
				tc.check(t, tc.allocs.requests[0])
			}
			if tc.want.quiet && (strings.Contains(logs.String(), `"level":"WARN"`) || strings.Contains(logs.String(), `"level":"ERROR"`)) {
				t.Fatalf("a copy's outcome logged as a problem: %s", logs.String())
			}
			// The outcome is logged with the match id: here when the event is
			// done with, by the function (which logs the error) when not.
			switch {
			case tc.want.err == ErrNotAMatch:
			case err != nil && !strings.Contains(err.Error(), matchID):
				t.Fatalf("the error %q does not name the match", err)
			case err == nil && !strings.Contains(logs.String(), matchID):
				t.Fatalf("the outcome was not logged with the match id: %q", logs.String())
			}
		})
	}
}

// A slow DescribeMatchmaking costs the match at most TicketsTimeout: then
// it is placed by customEventData.region.
func TestHandleTicketsTimeout(t *testing.T) {
	ev := standalone(23)
	detailOf(ev)["customEventData"] = `{"region":"us-east"}`
	allocs, slow := &fakeAllocations{}, &fakeTickets{block: true}
	svc := &Service{Allocations: allocs, Matches: &fakeMatches{}, Tickets: slow, TicketsTimeout: 50 * time.Millisecond, QueueTimeout: time.Minute}
	start := time.Now()
	if err := svc.Handle(context.Background(), encode(t, ev)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Handle took %v with a TicketsTimeout of 50ms", took)
	}
	if len(allocs.requests) != 1 || allocs.requests[0].DesiredRegion != "us-east" || allocs.requests[0].PlayerLatencies != nil {
		t.Fatalf("requests %+v, want one for customEventData.region", allocs.requests)
	}
	if sizes := slow.callSizes(); !reflect.DeepEqual(sizes, []int{10}) {
		t.Fatalf("calls of %v tickets: after the first call timed out, none should follow", sizes)
	}
}

// Every ticket of the match is read, at most TicketsPerCall a call.
func TestHandleReadsEveryTicket(t *testing.T) {
	ev := standalone(23)
	f := &fakeTickets{players: map[string][]allocation.PlayerLatency{}}
	var ids []string
	for _, tk := range detailOf(ev)["tickets"].([]any) {
		ids = append(ids, tk.(map[string]any)["ticketId"].(string))
	}
	svc := &Service{Allocations: &fakeAllocations{}, Matches: &fakeMatches{}, Tickets: f, TicketsTimeout: time.Second}
	if err := svc.Handle(context.Background(), encode(t, ev)); err != nil {
		t.Fatal(err)
	}
	var asked []string
	for _, c := range f.calls {
		asked = append(asked, c...)
	}
	if sizes := f.callSizes(); !reflect.DeepEqual(sizes, []int{10, 10, 3}) || !reflect.DeepEqual(asked, ids) {
		t.Fatalf("calls of %v tickets asking %v; want 10, 10, 3 asking %v", sizes, asked, ids)
	}
}
