package allocation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func gameSession() GameSessionPlacement {
	seats := 4
	return GameSessionPlacement{Digest: "digest-1", Session: gameinstance.GameSession{Name: "arena", Data: "map=dust",
		Properties: []gameinstance.GameProperty{{Key: "mode", Value: "ctf"}}, MaximumPlayerSessionCount: &seats,
		DesiredPlayerSessions: []gameinstance.PlayerSession{{PlayerID: "p1", PlayerData: "red"}}}}
}

// A GameLift placement's game session reaches the game server as top-level
// payload fields, on the first attempt and on the queue worker's, and its
// plan is its queue's regions alone: the deployment's fallback ("eu") is
// never asked.
func TestGameSessionPlacementPayloadAndPlan(t *testing.T) {
	alloc := &script{queue: map[string][]error{"us-west": {status(503, time.Second), nil}, "eu": {nil}}}
	svc, store, q, c := queuedService(alloc)
	req := Request{GameInstanceID: "pl-1", PreferredRegions: []string{"us-west"}, QueueTimeoutSeconds: seconds(60)}
	res, err := svc.AllocateGameSession(context.Background(), req, gameSession())
	if err != nil || res.Record.State != gameinstance.StateQueued || res.Record.Fingerprint.GameLift != "digest-1" {
		t.Fatalf("AllocateGameSession = %+v, %v; want Queued with the digest", res.Record, err)
	}
	if strings.Join(alloc.calls, ",") != "us-west" {
		t.Fatalf("asked %v, want us-west only (no fallback)", alloc.calls)
	}
	m := q.last(t)
	if m.GameSession == nil || m.GameSession.Session.Name != "arena" {
		t.Fatalf("the queue message lost the game session: %+v", m)
	}
	// Through SQS the message is JSON.
	raw, _ := json.Marshal(m)
	var back QueuedPlacement
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(time.Second)
	if err := svc.Resume(context.Background(), back); err != nil {
		t.Fatal(err)
	}
	if rec, _ := store.Get(context.Background(), "pl-1"); rec.State != gameinstance.StateAllocated || !rec.AllocatedAt.Equal(c.now) {
		t.Fatalf("after the worker: %+v", rec)
	}
	payload, _ := json.Marshal(alloc.last.Payload)
	for _, want := range []string{`"GameSessionName":"arena"`, `"GameProperties":[{"Key":"mode","Value":"ctf"}]`, `"GameSessionData":"map=dust"`,
		`"MaximumPlayerSessionCount":4`, `"DesiredPlayerSessions":[{"PlayerId":"p1","PlayerData":"red"}]`, `"GameInstanceId":"pl-1"`} {
		if !strings.Contains(string(payload), want) {
			t.Errorf("payload %s lacks %s", payload, want)
		}
	}
}

// A plain allocation's payload has none of the game session's fields; a
// placement's failure is final, and the same id with other inputs is a
// mismatch.
func TestGameSessionPlacementIsFinalAndKeptApart(t *testing.T) {
	alloc := &script{queue: map[string][]error{"eu": {nil}, "us-west": {status(400, 0), nil}}}
	svc, _ := newTestService(alloc)
	if _, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-plain"}); err != nil {
		t.Fatal(err)
	}
	if payload, _ := json.Marshal(alloc.last.Payload); strings.Contains(string(payload), "GameSession") || strings.Contains(string(payload), "Properties") {
		t.Fatalf("a plain payload carries game session fields: %s", payload)
	}
	req := Request{GameInstanceID: "pl-2", PreferredRegions: []string{"us-west"}}
	if _, err := svc.AllocateGameSession(context.Background(), req, gameSession()); gameinstance.CodeOf(err) != gameinstance.CodeAllocationFailed {
		t.Fatalf("first try: %v, want ALLOCATION_FAILED", err)
	}
	res, err := svc.AllocateGameSession(context.Background(), req, gameSession())
	if err != nil || res.Record.State != gameinstance.StateFailed || len(alloc.calls) != 2 {
		t.Fatalf("the same placement again = %+v, %v (calls %v); want its Failed record, no second attempt", res.Record, err, alloc.calls)
	}
	other := gameSession()
	other.Digest = "digest-2"
	for _, try := range []func() error{
		func() error { _, err := svc.AllocateGameSession(context.Background(), req, other); return err },
		func() error { _, err := svc.Allocate(context.Background(), req); return err },
	} {
		if err := try(); gameinstance.CodeOf(err) != gameinstance.CodeIdempotencyMismatch {
			t.Fatalf("other inputs for pl-2: %v, want IDEMPOTENCY_MISMATCH", err)
		}
	}
}
