//go:build integration

package tests

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// One heartbeat loop serves a whole rooms server: gi-1's heartbeat with
// allSessions keeps gi-2 alive through ten minutes of sweeps (written
// first, or read first and written once a period), lists the sessions it
// found, and leaves one that never linked to the sweep; the rooms balance.
func TestRoomsOneHeartbeatForAllSessions(t *testing.T) {
	for _, readFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("readFirst=", readFirst), func(t *testing.T) {
			clk := harness.NewClock(time.Now().UTC())
			e, cb, addr := roomsEnv(t, envOptions{now: clk.Now}, 4)
			e.lifecycle.ReadBeforeHeartbeat = readFirst
			p := e.lifecycle.Policy
			for _, id := range []string{"gi-2", "gi-3", "gi-4"} {
				e.allocateIn(t, id, "us-west", "").expect(t, http.StatusCreated, "")
			}
			e.linkAsSession(t, cb.payloadOf(t, "gi-2")).expect(t, http.StatusOK, "")
			e.linkAsSession(t, cb.payloadOf(t, "gi-3")).expect(t, http.StatusOK, "")
			e.do(t, http.MethodDelete, "/v1/allocations/gi-3", "").expect(t, http.StatusOK, "") // its room is given back

			step := p.Period / 3
			if !readFirst {
				step = p.Period
			}
			for at := step; at <= 10*time.Minute; at += step {
				clk.Advance(step)
				r := e.server(t, "heartbeat", "gi-1", `{"allSessions":true}`).expect(t, http.StatusOK, "")
				got := map[string]string{}
				sessions, _ := r.Body["sessions"].([]any)
				for _, s := range sessions {
					m := s.(map[string]any)
					got[m["gameInstanceId"].(string)] = m["state"].(string)
				}
				if got["gi-2"] != "Linked" || got["gi-3"] != "" || got["gi-1"] != "" || len(got) > 2 {
					t.Fatalf("at %v the heartbeat listed %v (%s)", at, got, r.Raw)
				}
				if _, err := e.lifecycle.Sweep(context.Background()); err != nil {
					t.Fatal(err)
				}
				rec, err := e.store.Get(context.Background(), "gi-2")
				if err != nil {
					t.Fatal(err)
				}
				if lag := clk.Now().Sub(rec.LastHeartbeatAt); at > p.InitialDelay+p.Period && lag >= p.Period {
					t.Fatalf("at %v gi-2's recorded heartbeat lags %v", at, lag)
				}
			}
			for id, want := range map[string]string{"gi-1": "Linked", "gi-2": "Linked", "gi-3": "Ended", "gi-4": "Unhealthy"} {
				if got := e.state(t, id); got != want {
					t.Errorf("%s is %s, want %s", id, got, want)
				}
			}
			if gs := e.gameServer(t, addr); len(gs.Sessions) != 2 || gs.ClosedReason != gameinstance.ClosedSessionUnhealthy {
				t.Errorf("game server holds %v (closed: %q), want gi-1 and gi-2, closed for gi-4", gs.Sessions, gs.ClosedReason)
			}
			e.requireRoomsBalance(t)
		})
	}
}

// The server's beat saved with its reply lost: the SDK's retry sets the
// same beat again, so the call answers 200, the session is listed Linked,
// and its record is not written (its version stays) yet reads with the
// server's beat as its heartbeat.
func TestRoomsServerBeatReplyLost(t *testing.T) {
	proxy := newReplyLoss(t, stack.ddbEndpoint)
	e, cb, addr := roomsEnv(t, envOptions{ddbEndpoint: proxy.Endpoint()}, 4)
	e.allocateIn(t, "gi-2", "us-west", "").expect(t, http.StatusCreated, "")
	e.linkAsSession(t, cb.payloadOf(t, "gi-2")).expect(t, http.StatusOK, "")
	before := e.rawItem(t, "gi-2")
	rule := proxy.Lose("UpdateItem", "contains(#sessions, :session)", 1)
	r := e.server(t, "heartbeat", "gi-1", `{"allSessions":true}`).expect(t, http.StatusOK, "")
	if lost := proxy.Lost(rule); lost != 1 {
		t.Fatalf("%d replies lost, want 1: the server's beat was not the write called", lost)
	}
	if sessions, _ := r.Body["sessions"].([]any); len(sessions) != 1 || sessions[0].(map[string]any)["state"] != "Linked" {
		t.Fatalf("answer %s, want gi-2 listed Linked", r.Raw)
	}
	after := e.rawItem(t, "gi-2")
	if num(after, "version") != num(before, "version") || str(after, "lastHeartbeatAt") != str(before, "lastHeartbeatAt") {
		t.Fatalf("gi-2's record was written (version %s -> %s): a server's beat writes the server's record alone", num(before, "version"), num(after, "version"))
	}
	beat := str(rawServerItem(t, e.serversTable, addr), "lastBeatAt")
	rec, err := e.store.Get(context.Background(), "gi-2")
	if err != nil || beat == "" || store.FormatTime(rec.LastHeartbeatAt) != beat {
		t.Fatalf("gi-2 reads with heartbeat %v (%v), want the server's beat %q", rec.LastHeartbeatAt, err, beat)
	}
	e.requireRoomsBalance(t)
}

// A server's beat counts for the sessions its record lists, and for no
// other: read strongly (Get) and in batches over several servers
// (HealthOf, the sweep's first look), against DynamoDB Local.
func TestRoomsServerBeatsFoldIntoReads(t *testing.T) {
	e, _, _ := roomsEnv(t, envOptions{}, 4)
	ctx := context.Background()
	records := store.NewGameInstances(stack.ddb, e.table).WithRooms(e.servers)
	now := time.Now().UTC().Truncate(time.Millisecond)
	own := now.Add(-4 * time.Minute)
	beats := map[string]time.Time{"192.0.2.1:7777": now.Add(-10 * time.Second), "192.0.2.2:7777": now.Add(-20 * time.Second)}
	lists := map[string][]string{"192.0.2.1:7777": {"fold-a1", "fold-a2"}, "192.0.2.2:7777": {"fold-b1"}, "192.0.2.3:7777": {"fold-c1"}}
	for addr, sessions := range lists {
		item := map[string]types.AttributeValue{"address": &types.AttributeValueMemberS{Value: addr},
			"sessions": &types.AttributeValueMemberSS{Value: sessions}}
		if at, ok := beats[addr]; ok {
			item["lastBeatAt"] = &types.AttributeValueMemberS{Value: store.FormatTime(at)}
		}
		if _, err := stack.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.serversTable), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	onServer := map[string]string{"fold-a1": "192.0.2.1:7777", "fold-a2": "192.0.2.1:7777", "fold-b1": "192.0.2.2:7777",
		"fold-c1": "192.0.2.3:7777", "fold-x": "192.0.2.1:7777"} // fold-x: not in the server's sessions
	for id, addr := range onServer {
		item, err := store.Encode(gameinstance.Record{GameInstanceID: id, State: gameinstance.StateLinked, RoomServer: addr, Placement: gameinstance.PlacementRoom,
			LinkedAt: own.Add(-time.Minute), LastHeartbeatAt: own, CreatedAt: own, UpdatedAt: own, HealthDeadline: own.Add(time.Minute), Version: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stack.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]time.Time{"fold-a1": beats["192.0.2.1:7777"], "fold-a2": beats["192.0.2.1:7777"], "fold-b1": beats["192.0.2.2:7777"], "fold-c1": own, "fold-x": own}
	recs, err := records.HealthOf(ctx, slices.Collect(maps.Keys(onServer)))
	if err != nil || len(recs) != len(want) {
		t.Fatalf("HealthOf: %d records (%v)", len(recs), err)
	}
	for _, r := range recs {
		if !r.LastHeartbeatAt.Equal(want[r.GameInstanceID]) || r.RoomServer != onServer[r.GameInstanceID] {
			t.Errorf("HealthOf: %s heartbeat %v on %q, want %v", r.GameInstanceID, r.LastHeartbeatAt, r.RoomServer, want[r.GameInstanceID])
		}
	}
	for id, at := range want {
		if r, err := records.Get(ctx, id); err != nil || !r.LastHeartbeatAt.Equal(at) {
			t.Errorf("Get: %s heartbeat %v (%v), want %v", id, r.LastHeartbeatAt, err, at)
		}
	}
	// A beat only from a session the server lists; it moves every one of them.
	if _, err := records.BeatServer(ctx, "192.0.2.1:7777", "fold-x", now); !errors.Is(err, gameinstance.ErrNotFound) {
		t.Fatalf("a beat from a session the server does not list: %v, want ErrNotFound", err)
	}
	if sessions, err := records.BeatServer(ctx, "192.0.2.1:7777", "fold-a1", now); err != nil || !slices.Equal(slices.Sorted(slices.Values(sessions)), []string{"fold-a1", "fold-a2"}) {
		t.Fatalf("the beat answered sessions %v (%v), want the server's two", sessions, err)
	}
	if r, err := records.Get(ctx, "fold-a2"); err != nil || !r.LastHeartbeatAt.Equal(now) {
		t.Errorf("after the beat fold-a2 reads with heartbeat %v (%v), want %v", r.LastHeartbeatAt, err, now)
	}
}
