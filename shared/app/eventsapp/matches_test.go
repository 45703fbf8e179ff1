package eventsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
)

const matchEventName = "GameFabricMatchmakingSucceeded"

// keptMatches stands in for MatchesTable: Get answers from kept, err, or
// ErrNotFound, and records what it was asked.
type keptMatches struct {
	kept  map[string]gameinstance.Match
	err   error
	asked []string
}

func (k *keptMatches) Get(_ context.Context, id string) (gameinstance.Match, error) {
	k.asked = append(k.asked, id)
	if k.err != nil {
		return gameinstance.Match{}, k.err
	}
	m, ok := k.kept[id]
	if !ok {
		return gameinstance.Match{}, gameinstance.ErrNotFound
	}
	return m, nil
}

var (
	matchTickets = []string{"ticket-1", "ticket-2"}
	matchDetail  = `{"tickets":[{"ticketId":"ticket-1","players":[{"playerId":"p1"}]},{"ticketId":"ticket-2","players":[{"playerId":"p2"}]}],` +
		`"type":"MatchmakingSucceeded","gameSessionInfo":{"players":[{"playerId":"p1"},{"playerId":"p2"}]},"matchId":"m-1"}`
	t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
)

func kept(ids ...string) *keptMatches {
	k := &keptMatches{kept: map[string]gameinstance.Match{}}
	for _, id := range ids {
		k.kept[id] = gameinstance.Match{ID: id, Detail: json.RawMessage(strings.ReplaceAll(matchDetail, "m-1", id)), TicketIDs: matchTickets}
	}
	return k
}

// transition is the events of id's record going from one state to the next.
func transition(id string, match bool, from, to gameinstance.State, mod func(*gameinstance.Record)) []eventcatalog.Event {
	old := gameinstance.Record{GameInstanceID: id, State: from, Version: 1, Fingerprint: gameinstance.Fingerprint{Match: match}, UpdatedAt: t0}
	cur := old
	cur.State, cur.Version, cur.UpdatedAt = to, 2, t0.Add(time.Second)
	switch to {
	case gameinstance.StateAllocated:
		cur.Server = &gameinstance.Server{Address: "203.0.113.7:7777", IP: "203.0.113.7", Ports: map[string]int{"game": 7777}}
	case gameinstance.StateFailed:
		cur.Failure = &gameinstance.Failure{Code: gameinstance.CodeNoCapacity, Message: "no servers"}
	}
	if mod != nil {
		mod(&cur)
	}
	return eventcatalog.FromGameInstance(&old, cur)
}

// summary is each event as "<detail-type> <subject> <ticketIds>".
func summary(evs []eventcatalog.Event) []string {
	var out []string
	for _, e := range evs {
		tickets := ""
		if e.Instance != nil {
			tickets = strings.Join(e.Instance.TicketIDs, ",")
		}
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s", e.Type, e.Subject(), tickets)))
	}
	return out
}

func TestMatchEvents(t *testing.T) {
	orphan := func(r *gameinstance.Record) {
		r.Attempts = []gameinstance.Attempt{{Region: "eu", SuspectedOrphan: true}, {Region: "us", Status: 200}}
	}
	recoveredByLink := func(r *gameinstance.Record) {
		r.RecoveredByLink = true
		r.Server = &gameinstance.Server{Address: "203.0.113.7:7777", IP: "203.0.113.7", Ports: map[string]int{"game": 7777}}
	}
	storeDown := errors.New("dial tcp 127.0.0.1:8000: connect: connection refused")
	for _, tc := range []struct {
		name    string
		matches *keptMatches
		evs     []eventcatalog.Event
		want    []string
		asked   []string
		err     error
	}{
		{"allocated: tickets, then the match's event", kept("m-1"),
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			[]string{"GameServerAllocated m-1 ticket-1,ticket-2", matchEventName + " m-1"}, []string{"m-1"}, nil},
		{"allocated from the queue", kept("m-1"),
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, func(r *gameinstance.Record) {
				r.Queue = &gameinstance.Queue{StartedAt: t0, Until: t0.Add(time.Minute), Ticket: "q"}
			}),
			[]string{"GameServerAllocated m-1 ticket-1,ticket-2", matchEventName + " m-1"}, []string{"m-1"}, nil},
		{"the match's event right after GameServerAllocated", kept("m-1"),
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, orphan),
			[]string{"GameServerAllocated m-1 ticket-1,ticket-2", matchEventName + " m-1", "SuspectedOrphan m-1"}, []string{"m-1"}, nil},
		{"failed: tickets, no other event", kept("m-1"),
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateFailed, nil),
			[]string{"AllocationFailed m-1 ticket-1,ticket-2"}, []string{"m-1"}, nil},
		{"rejected (a Failed record created as such)", kept("m-1"),
			eventcatalog.FromGameInstance(nil, gameinstance.Record{GameInstanceID: "m-1", State: gameinstance.StateFailed, Version: 1,
				Fingerprint: gameinstance.Fingerprint{Match: true}, Failure: &gameinstance.Failure{Code: gameinstance.CodeMatchTooLarge, Message: "201 players"}}),
			[]string{"AllocationFailed m-1 ticket-1,ticket-2"}, []string{"m-1"}, nil},
		{"a match not kept: published without", kept(),
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			[]string{"GameServerAllocated m-1"}, []string{"m-1"}, nil},
		{"a match kept without its detail: tickets, no event", &keptMatches{kept: map[string]gameinstance.Match{"m-1": {ID: "m-1", TicketIDs: matchTickets}}},
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			[]string{"GameServerAllocated m-1 ticket-1,ticket-2"}, []string{"m-1"}, nil},
		{"other events of a match are not completed", kept("m-1"),
			append(append(transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateQueued, func(r *gameinstance.Record) {
				r.Queue = &gameinstance.Queue{StartedAt: t0, Until: t0.Add(time.Minute), Ticket: "q"}
			}), transition("m-1", true, gameinstance.StateAllocated, gameinstance.StateLinked, nil)...),
				transition("m-1", true, gameinstance.StateLinked, gameinstance.StateEnded, nil)...),
			[]string{"AllocationQueued m-1", "GameServerLinked m-1", "GameInstanceEnded m-1"}, nil, nil},
		{"recovered by its server's link: GameServerLinked stands in for GameServerAllocated", kept("m-1"),
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateLinked, recoveredByLink),
			[]string{"GameServerLinked m-1 ticket-1,ticket-2", matchEventName + " m-1"}, []string{"m-1"}, nil},
		{"a recovered match's later events are not completed", kept("m-1"),
			transition("m-1", true, gameinstance.StateLinked, gameinstance.StateEnded, recoveredByLink),
			[]string{"GameInstanceEnded m-1"}, nil, nil},
		{"an API call's instance is untouched", kept("gi-1"),
			append(transition("gi-1", false, gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
				transition("gi-2", false, gameinstance.StateAllocating, gameinstance.StateFailed, nil)...),
			[]string{"GameServerAllocated gi-1", "AllocationFailed gi-2"}, nil, nil},
		{"matches and others in one batch", kept("m-1", "m-2"),
			append(append(transition("gi-1", false, gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
				transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, nil)...),
				transition("m-2", true, gameinstance.StateAllocating, gameinstance.StateFailed, nil)...),
			[]string{"GameServerAllocated gi-1", "GameServerAllocated m-1 ticket-1,ticket-2", matchEventName + " m-1", "AllocationFailed m-2 ticket-1,ticket-2"},
			[]string{"m-1", "m-2"}, nil},
		{"the store cannot say: an error", &keptMatches{err: storeDown},
			transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, nil),
			nil, []string{"m-1"}, storeDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			ctx := logging.WithLogger(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)))
			got, err := matchEvents(ctx, tc.matches, matchEventName, tc.evs)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if s := summary(got); !reflect.DeepEqual(s, tc.want) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(s, "\n"), strings.Join(tc.want, "\n"))
			}
			if !reflect.DeepEqual(tc.matches.asked, tc.asked) {
				t.Errorf("asked for matches %v, want %v", tc.matches.asked, tc.asked)
			}
			if strings.HasPrefix(tc.name, "a match not kept") && !strings.Contains(logs.String(), `"matchId":"m-1"`) {
				t.Errorf("a match not kept is not logged: %s", logs.String())
			}
		})
	}
}

// The match's event published again is the kept detail with the server's
// address, and every GameServerAllocated detail names the tickets.
func TestMatchEventsDetail(t *testing.T) {
	got, err := matchEvents(context.Background(), kept("m-1"), matchEventName,
		transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, nil))
	if err != nil || len(got) != 2 {
		t.Fatalf("events %v, err %v", summary(got), err)
	}
	allocated, _ := got[0].Detail()
	if !strings.Contains(string(allocated), `"matchId":"m-1","ticketIds":["ticket-1","ticket-2"]`) {
		t.Errorf("GameServerAllocated detail %s", allocated)
	}
	again, _ := got[1].Detail()
	var d struct {
		Type            string `json:"type"`
		MatchID         string `json:"matchId"`
		IdempotencyKey  string `json:"idempotencyKey"`
		GameSessionInfo struct {
			IPAddress      string            `json:"ipAddress"`
			Port           int               `json:"port"`
			GameSessionArn *string           `json:"gameSessionArn"`
			Players        []json.RawMessage `json:"players"`
		} `json:"gameSessionInfo"`
	}
	if err := json.Unmarshal(again, &d); err != nil {
		t.Fatal(err)
	}
	if d.Type != matchEventName || d.MatchID != "m-1" || d.IdempotencyKey != "m-1:2:"+matchEventName || d.GameSessionInfo.IPAddress != "203.0.113.7" ||
		d.GameSessionInfo.Port != 7777 || d.GameSessionInfo.GameSessionArn == nil || *d.GameSessionInfo.GameSessionArn != "" || len(d.GameSessionInfo.Players) != 2 {
		t.Errorf("%s detail %s", got[1].Type, again)
	}
	if !got[1].Time.Equal(got[0].Time) {
		t.Errorf("time %v, want GameServerAllocated's %v", got[1].Time, got[0].Time)
	}
}

func TestMatchEventsWithoutMatches(t *testing.T) {
	evs := transition("m-1", true, gameinstance.StateAllocating, gameinstance.StateAllocated, nil)
	got, err := matchEvents(context.Background(), nil, matchEventName, evs)
	if err != nil || !reflect.DeepEqual(got, evs) || got[0].Instance.TicketIDs != nil {
		t.Fatalf("events %v, err %v; want them unchanged", summary(got), err)
	}
}

// matchImage is a match's game-instance stream record: fromMatch set, the
// server in the new image when it is Allocated.
func matchImage(seq, id, oldState string, oldVersion int, newState string, newVersion int) string {
	img := func(state string, version int) string {
		server := ""
		if state == "Allocated" {
			server = `,"server":{"M":{"address":{"S":"203.0.113.7:7777"},"ip":{"S":"203.0.113.7"},"ports":{"M":{"game":{"N":"7777"}}}}}`
		}
		return fmt.Sprintf(`{"gameInstanceId":{"S":%q},"state":{"S":%q},"version":{"N":"%d"},"updatedAt":{"S":"2026-11-23T12:00:0%dZ"},"fromMatch":{"BOOL":true}%s}`,
			id, state, version, version, server)
	}
	return fmt.Sprintf(`{"eventID":"e%s","eventName":"MODIFY","eventSource":"aws:dynamodb","dynamodb":{"Keys":{"gameInstanceId":{"S":%q}},"SequenceNumber":%q,"OldImage":%s,"NewImage":%s}}`,
		seq, id, seq, img(oldState, oldVersion), img(newState, newVersion))
}

func TestHandlerPublishesMatches(t *testing.T) {
	allocated := instance("10", "MODIFY", "g1", "Allocating", 1, "Allocated", 2)
	match := matchImage("11", "m-1", "Allocating", 1, "Allocated", 2)
	failed := matchImage("12", "m-2", "Allocating", 1, "Failed", 2)
	for _, tc := range []struct {
		name    string
		matches *keptMatches
		want    []string
		failed  string
	}{
		{"the match's event follows its GameServerAllocated", kept("m-1", "m-2"), []string{
			"GameServerAllocated g1:2:GameServerAllocated",
			"GameServerAllocated m-1:2:GameServerAllocated",
			matchEventName + " m-1:2:" + matchEventName,
			"AllocationFailed m-2:2:AllocationFailed",
		}, ""},
		// The record whose match cannot be read is handed back (Lambda
		// retries from it); the records before it are published.
		{"the store down hands the record back", &keptMatches{err: errors.New("throttled")}, []string{
			"GameServerAllocated g1:2:GameServerAllocated",
		}, "11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ev events.DynamoDBEvent
			if err := json.Unmarshal([]byte(`{"Records":[`+strings.Join([]string{allocated, match, failed}, ",")+`]}`), &ev); err != nil {
				t.Fatal(err)
			}
			b := &bus{}
			var out, emf bytes.Buffer
			h := Handler(config.Events{Bus: "bus", MatchmakingEventName: matchEventName}, b, Kept{Matches: tc.matches}, metrics.NewEMF(&emf), slog.New(slog.NewJSONHandler(&out, nil)))
			res, err := h(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(b.put, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("put:\n%s\nwant:\n%s", strings.Join(b.put, "\n"), strings.Join(tc.want, "\n"))
			}
			failed := ""
			for _, f := range res.BatchItemFailures {
				failed += f.ItemIdentifier
			}
			if failed != tc.failed {
				t.Errorf("batch item failures %q, want %q", failed, tc.failed)
			}
		})
	}
}
