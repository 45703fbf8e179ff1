package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// PlacementKey is GameSessionPlacementsTable's key attribute.
const PlacementKey = "placementId"

// GameSessionPlacements keeps what the service needs of GameLift game
// session placements beside their records, one item per PlacementId
// (GameSessionPlacementsTable): the game session's bulk (its data, its
// players) stays out of the record a heartbeat rewrites. The same item
// access as Matches: a conditional PutItem and a GetItem.
type GameSessionPlacements struct{ kept }

// NewGameSessionPlacements uses table through db; items expire after
// retention.
func NewGameSessionPlacements(db MatchesDB, table string, retention time.Duration) *GameSessionPlacements {
	return &GameSessionPlacements{kept{db: db, table: table, key: PlacementKey, what: "placement", retention: retention, now: time.Now}}
}

type placementItem struct {
	PlacementID string `dynamodbav:"placementId"`
	Digest      string `dynamodbav:"digest"`
	// Placement is the whole gameinstance.GameSessionPlacement as JSON.
	Placement string `dynamodbav:"placement"`
	CreatedAt int64  `dynamodbav:"createdAt"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

// Keep writes p unless its id is kept already with another digest
// (gameinstance.ErrOtherInputs): the same placement asked again (an SDK's
// retry, or one whose reply was lost) writes the same item again, and a
// placement id is never taken over by other inputs.
func (s *GameSessionPlacements) Keep(ctx context.Context, p gameinstance.GameSessionPlacement) error {
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode placement %s: %w", p.ID, err)
	}
	created, expires := s.expiry()
	stored, err := s.put(ctx, p.ID, placementItem{PlacementID: p.ID, Digest: p.Digest, Placement: string(body), CreatedAt: created, ExpiresAt: expires},
		"attribute_not_exists(placementId) OR digest = :digest", map[string]types.AttributeValue{":digest": &types.AttributeValueMemberS{Value: p.Digest}})
	if err == nil && !stored {
		return gameinstance.ErrOtherInputs
	}
	return err
}

// Get returns the kept placement, or gameinstance.ErrNotFound.
func (s *GameSessionPlacements) Get(ctx context.Context, id string) (gameinstance.GameSessionPlacement, error) {
	var it placementItem
	var p gameinstance.GameSessionPlacement
	if err := s.get(ctx, id, &it); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(it.Placement), &p); err != nil {
		return p, fmt.Errorf("decode placement %s: %w", id, err)
	}
	return p, nil
}
