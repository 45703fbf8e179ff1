package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Heartbeat records a Linked instance's heartbeat in one conditional
// UpdateItem: no read, no rewrite of the item, the state and the token
// hash in the condition. It sets lastHeartbeatAt, updatedAt and version,
// none of them in the health index (KEYS_ONLY), so DynamoDB writes the
// record alone: one write unit for a record under 1 KB. applied is false
// when the condition failed: rec is then the stored record (ErrNotFound
// when there is none), for the caller to tell a wrong token from a wrong
// state.
//
// A write saved with its reply lost is retried by the SDK; the retry fails
// the condition against the write itself (lastHeartbeatAt is already now)
// and recognises it, so one heartbeat is one version, as for every write.
func (s *GameInstances) Heartbeat(ctx context.Context, id, tokenHash string, now time.Time) (rec gameinstance.Record, applied bool, err error) {
	return s.beat(ctx, id, beatGuard{attr: "partnerGameTokenHash", name: ":hash", value: tokenHash}, now)
}

// beatGuard is the attribute a heartbeat's write is conditioned on, besides
// the state: the token hash.
type beatGuard struct{ attr, name, value string }

func (g beatGuard) holds(rec gameinstance.Record) bool { return rec.PartnerGameTokenHash == g.value }

func (s *GameInstances) beat(ctx context.Context, id string, guard beatGuard, now time.Time) (rec gameinstance.Record, applied bool, err error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.table),
		Key:              key(id),
		UpdateExpression: aws.String("SET lastHeartbeatAt = :now, updatedAt = :now, #v = if_not_exists(#v, :zero) + :one"),
		// attribute_exists(healthShard): a Linked record without its index
		// key (written before there was one) takes the full path instead.
		ConditionExpression: aws.String("#state = :linked AND " + guard.attr + " = " + guard.name + " AND attribute_exists(healthShard) AND " +
			"(attribute_not_exists(lastHeartbeatAt) OR lastHeartbeatAt <> :now)"),
		ExpressionAttributeNames: map[string]string{"#state": "state", "#v": "version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":     &types.AttributeValueMemberS{Value: FormatTime(now)},
			":zero":    &types.AttributeValueMemberN{Value: "0"},
			":one":     &types.AttributeValueMemberN{Value: "1"},
			":linked":  &types.AttributeValueMemberS{Value: string(gameinstance.StateLinked)},
			guard.name: &types.AttributeValueMemberS{Value: guard.value},
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		stored, err := s.conflicting(ctx, id, ccf)
		ours := err == nil && stored.State == gameinstance.StateLinked && guard.holds(stored) &&
			FormatTime(stored.LastHeartbeatAt) == FormatTime(now) && !stored.HealthDeadline.IsZero()
		return stored, ours, err
	}
	if err != nil {
		return gameinstance.Record{}, false, fmt.Errorf("heartbeat %s: %w", id, err)
	}
	rec, err = decode(out.Attributes)
	return rec, err == nil, err
}
