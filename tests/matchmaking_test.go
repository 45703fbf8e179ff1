//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsgamelift "github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/gamefabric-alloc/allocsvc/local/gamelift"
	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/gamelifttickets"
	"github.com/gamefabric-alloc/allocsvc/shared/matchmaking"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// matchFront is MatchmakingFunction's service in-process on the real
// components: the env's allocation use case, MatchesTable on DynamoDB
// Local, and the real GameLift SDK client against the GameLift stand-in.
type matchFront struct {
	*matchmaking.Service
	gl  *gamelift.StandIn
	env *env
}

func newMatchFront(t *testing.T, e *env, queueTimeout time.Duration) matchFront {
	t.Helper()
	gl := gamelift.New()
	srv := httptest.NewServer(gl)
	t.Cleanup(srv.Close)
	client := awsgamelift.NewFromConfig(harness.AWSConfig(), func(o *awsgamelift.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	return matchFront{gl: gl, Service: &matchmaking.Service{
		Allocations: e.svc, Matches: store.NewMatches(stack.ddb, e.matchesTable, time.Hour),
		Tickets: gamelifttickets.Tickets{API: client}, TicketsTimeout: 3 * time.Second, QueueTimeout: queueTimeout,
	}}
}

// matchEvent is a standalone MatchmakingSucceeded event of one ticket per
// player (ticket "<matchId>-t<i>"), as GameFabric's guide captures it.
func matchEvent(matchID string, players int, customEventData string) []byte {
	type player struct {
		PlayerID string `json:"playerId"`
		Team     string `json:"team"`
	}
	type ticket struct {
		TicketID  string   `json:"ticketId"`
		StartTime string   `json:"startTime"`
		Players   []player `json:"players"`
	}
	var tickets []ticket
	var all []player
	for i := range players {
		p := player{PlayerID: fmt.Sprintf("player-%d", i), Team: []string{"red", "blue"}[i%2]}
		tickets = append(tickets, ticket{TicketID: fmt.Sprintf("%s-t%d", matchID, i), StartTime: "2026-11-24T10:14:59.277Z", Players: []player{p}})
		all = append(all, p)
	}
	ev, _ := json.Marshal(map[string]any{
		"version": "0", "id": "ev-" + matchID, "detail-type": "GameLift Matchmaking Event", "source": "aws.gamelift",
		"account": "123456789012", "time": "2026-11-24T10:15:09.159Z", "region": "eu-central-1",
		"resources": []string{"arn:aws:gamelift:eu-central-1:123456789012:matchmakingconfiguration/sample-standalone"},
		"detail": map[string]any{"type": "MatchmakingSucceeded", "matchId": matchID, "tickets": tickets,
			"customEventData": customEventData, "gameSessionInfo": map[string]any{"players": all}},
	})
	return ev
}

// putTickets gives every player of matchID's event the latencies.
func (f matchFront) putTickets(matchID string, players int, latencies map[string]int) {
	for i := range players {
		f.gl.Put(gamelift.Ticket{TicketID: fmt.Sprintf("%s-t%d", matchID, i), Status: "COMPLETED",
			Players: []gamelift.Player{{PlayerID: fmt.Sprintf("player-%d", i), LatencyInMs: latencies}}})
	}
}

// The faults of the front door, each with its defined outcome: never a
// second server, never an error for a match that was recorded.
func TestMatchmakingFrontDoor(t *testing.T) {
	const near, far = "us-west", "eu-central-1"
	latencies := map[string]int{"custom-" + near: 30, "custom-" + far: 140}
	custom := `{"region":"` + far + `","attributes":{"env":"prag","armadaset":"sample-game-armada-set"}}`
	tests := []struct {
		name    string
		players int
		custom  string
		// script prepares the stand-ins; run delivers the event (any
		// number of times) and returns Handle's errors.
		script     func(f matchFront, e *env, id string)
		run        func(f matchFront, ev []byte) []error
		wantState  gameinstance.State
		wantRegion string
		wantCode   gameinstance.Code
		wantErr    bool
		wantCalls  int // GameFabric allocate calls
		noTickets  bool
	}{
		{name: "latencies choose the region", players: 4, custom: custom, wantState: gameinstance.StateAllocated, wantRegion: near, wantCalls: 1},
		{name: "the same event 8 times at once", players: 2, custom: custom, wantState: gameinstance.StateAllocated, wantRegion: near, wantCalls: 1,
			run: func(f matchFront, ev []byte) []error {
				errs := make([]error, 8)
				var wg sync.WaitGroup
				for i := range errs {
					wg.Go(func() { errs[i] = f.Handle(context.Background(), ev) })
				}
				wg.Wait()
				return errs
			}},
		{name: "DescribeMatchmaking failing: customEventData.region", players: 2, custom: custom, wantState: gameinstance.StateAllocated, wantRegion: far, wantCalls: 1,
			script: func(f matchFront, _ *env, _ string) {
				f.gl.Fail(gamelift.Fault{Status: 500, Type: "InternalServiceException"}, gamelift.Fault{Status: 500, Type: "InternalServiceException"},
					gamelift.Fault{Status: 500, Type: "InternalServiceException"})
			}},
		{name: "DescribeMatchmaking throttled once: retried, latencies used", players: 2, custom: custom, wantState: gameinstance.StateAllocated, wantRegion: near, wantCalls: 1,
			script: func(f matchFront, _ *env, _ string) {
				f.gl.Fail(gamelift.Fault{Status: 400, Type: "ThrottlingException"})
			}},
		{name: "DescribeMatchmaking slow: customEventData.region within the bound", players: 2, custom: custom, wantState: gameinstance.StateAllocated, wantRegion: far, wantCalls: 1,
			script: func(f matchFront, _ *env, _ string) { f.gl.Delay(10 * time.Second) }},
		{name: "tickets gone, no customEventData: FALLBACK_REGION", players: 2, custom: "", wantState: gameinstance.StateAllocated, wantRegion: far, wantCalls: 1,
			noTickets: true},
		{name: "customEventData not JSON: Failed INVALID_MATCH, twice the same", players: 2, custom: "region=eu", wantState: gameinstance.StateFailed,
			wantCode: gameinstance.CodeInvalidMatch, run: twice},
		{name: "customEventData names an unknown field", players: 2, custom: `{"regoin":"eu-central-1"}`, wantState: gameinstance.StateFailed,
			wantCode: gameinstance.CodeInvalidMatch},
		{name: "customEventData names an invalid version", players: 2, custom: `{"gameServerVersion":"bad version::x"}`, wantState: gameinstance.StateFailed,
			wantCode: gameinstance.CodeInvalidMatch},
		{name: "201 players: MATCH_TOO_LARGE", players: 201, custom: custom, wantState: gameinstance.StateFailed, wantCode: gameinstance.CodeMatchTooLarge},
		{name: "200 players fit", players: 200, custom: custom, wantState: gameinstance.StateAllocated, wantRegion: near, wantCalls: 1},
		{name: "no capacity anywhere: Failed, and a late copy does not try again", players: 2, custom: custom, wantState: gameinstance.StateFailed,
			wantCode: gameinstance.CodeNoCapacity, wantCalls: 2, run: twice,
			script: func(_ matchFront, e *env, _ string) {
				e.stub.Always(near, gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available"})
				e.stub.Always(far, gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available"})
			}},
		{name: "a match whose instance already ended", players: 2, custom: custom, wantState: gameinstance.StateEnded, wantRegion: near, wantCalls: 1,
			run: func(f matchFront, ev []byte) []error {
				err := f.Handle(context.Background(), ev)
				var d struct {
					Detail struct{ MatchID string } `json:"detail"`
				}
				_ = json.Unmarshal(ev, &d)
				if _, err := f.env.lifecycle.EndByBackend(context.Background(), d.Detail.MatchID); err != nil {
					return []error{err}
				}
				return []error{err, f.Handle(context.Background(), ev)}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOptions{fallbackRegion: far})
			e.stub.Always(near, gfemu.Answer{})
			e.stub.Always(far, gfemu.Answer{})
			f := newMatchFront(t, e, 0)
			f.env = e
			id := unique("match")
			if !tt.noTickets {
				f.putTickets(id, min(tt.players, 200), latencies)
			}
			if tt.script != nil {
				tt.script(f, e, id)
			}
			run := tt.run
			if run == nil {
				run = once
			}
			start := time.Now()
			for _, err := range run(f, matchEvent(id, tt.players, tt.custom)) {
				if err != nil {
					t.Errorf("Handle: %v", err)
				}
			}
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("handling took %s", took)
			}
			rec, err := e.store.Get(context.Background(), id)
			if err != nil || rec.State != tt.wantState || rec.Region != tt.wantRegion || !rec.Fingerprint.Match {
				t.Fatalf("record %s in %q (match %v), %v; want %s in %q", rec.State, rec.Region, rec.Fingerprint.Match, err, tt.wantState, tt.wantRegion)
			}
			if tt.wantCode != "" && (rec.Failure == nil || rec.Failure.Code != tt.wantCode) {
				t.Errorf("failure %+v, want %s", rec.Failure, tt.wantCode)
			}
			if n := len(e.stub.Calls()); n != tt.wantCalls {
				t.Errorf("GameFabric was asked %d times, want %d", n, tt.wantCalls)
			}
			kept, err := store.NewMatches(stack.ddb, e.matchesTable, time.Hour).Get(context.Background(), id)
			if err != nil || len(kept.TicketIDs) != min(tt.players, 200) || (tt.wantCode != gameinstance.CodeMatchTooLarge) != (len(kept.Detail) > 0) {
				t.Errorf("kept match: %d tickets, %d bytes of detail, %v", len(kept.TicketIDs), len(kept.Detail), err)
			}
		})
	}
}

func once(f matchFront, ev []byte) []error { return []error{f.Handle(context.Background(), ev)} }

func twice(f matchFront, ev []byte) []error {
	return []error{f.Handle(context.Background(), ev), f.Handle(context.Background(), ev)}
}

// An event that cannot be a match is an error (Lambda retries it, then
// sets it aside) and leaves nothing behind.
func TestMatchmakingNotAMatch(t *testing.T) {
	e := newEnv(t, envOptions{fallbackRegion: "eu-central-1"})
	f := newMatchFront(t, e, 0)
	for name, ev := range map[string][]byte{
		"not JSON":        []byte("{"),
		"another type":    []byte(`{"source":"aws.gamelift","detail-type":"GameLift Matchmaking Event","detail":{"type":"MatchmakingTimedOut","matchId":"m-1"}}`),
		"invalid matchId": matchEvent("no spaces allowed", 2, ""),
	} {
		if err := f.Handle(context.Background(), ev); !errors.Is(err, matchmaking.ErrNotAMatch) {
			t.Errorf("%s: %v, want ErrNotAMatch", name, err)
		}
	}
	if _, err := e.store.Get(context.Background(), "m-1"); !errors.Is(err, gameinstance.ErrNotFound) {
		t.Errorf("a record was written: %v", err)
	}
}

// A drained buffer delays the match instead of failing it: queued, then
// placed by the placement queue's worker once a server is back.
func TestMatchmakingQueuedWhileDrained(t *testing.T) {
	e := newEnv(t, envOptions{fallbackRegion: "us-west", queue: true})
	e.stub.Queue("us-west", gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available"},
		gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available"})
	e.stub.Always("us-west", gfemu.Answer{})
	f := newMatchFront(t, e, time.Minute)
	id := unique("match")
	if err := f.Handle(context.Background(), matchEvent(id, 2, `{"region":"us-west"}`)); err != nil {
		t.Fatal(err)
	}
	if rec, err := e.store.Get(context.Background(), id); err != nil || rec.State != gameinstance.StateQueued || !rec.Fingerprint.Match {
		t.Fatalf("record %s (match %v), %v; want Queued", rec.State, rec.Fingerprint.Match, err)
	}
	var rec gameinstance.Record
	e.work(t, 30*time.Second, func() bool {
		rec, _ = e.store.Get(context.Background(), id)
		return rec.State == gameinstance.StateAllocated
	})
	if rec.State != gameinstance.StateAllocated || !rec.Fingerprint.Match || len(e.stub.Allocations()) != 1 {
		t.Fatalf("record %s (match %v), %d allocations; want one, Allocated", rec.State, rec.Fingerprint.Match, len(e.stub.Allocations()))
	}
}
