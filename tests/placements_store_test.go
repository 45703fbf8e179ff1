//go:build integration

package tests

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// GameSessionPlacementsTable as the template creates it on DynamoDB Local:
// a placement reads back as kept; keeping it again with the same digest
// (an SDK's retry) is fine, with another digest refused and the first kept.
func TestGameSessionPlacementsStore(t *testing.T) {
	ctx := context.Background()
	placements := store.NewGameSessionPlacements(stack.ddb, newTables(t)["GameSessionPlacementsTable"], time.Hour)
	if _, err := placements.Get(ctx, "pl-unknown"); !errors.Is(err, gameinstance.ErrNotFound) {
		t.Fatalf("Get of an unknown placement: %v, want ErrNotFound", err)
	}
	seats := 8
	p := gameinstance.GameSessionPlacement{ID: unique("pl"), Digest: "d1", QueueName: "arena", QueueArn: "arn:aws:gamelift:us-east-1:123456789012:gamesessionqueue/arena",
		GameSessionArn: "arn:aws:gamelift:us-east-1::gamesession/fleet-gamefabric/pl",
		Session: gameinstance.GameSession{Name: "duel <&>", Data: `{"map":"dust"}`, MaximumPlayerSessionCount: &seats,
			Properties: []gameinstance.GameProperty{{Key: "mode", Value: "ctf"}}, DesiredPlayerSessions: []gameinstance.PlayerSession{{PlayerID: "p1", PlayerData: "red"}}},
		Latencies: []gameinstance.RegionLatency{{PlayerID: "p1", Region: "us-west", LatencyMs: 42.5}}, LocationOrder: []string{"us-west"}, FallbackStrategy: "NONE"}
	for range 2 {
		if err := placements.Keep(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	other := p
	other.Digest, other.QueueName = "d2", "other"
	if err := placements.Keep(ctx, other); !errors.Is(err, gameinstance.ErrOtherInputs) {
		t.Fatalf("other inputs under the same id: %v, want ErrOtherInputs", err)
	}
	if got, err := placements.Get(ctx, p.ID); err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, p)
	}
}
