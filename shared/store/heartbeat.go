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
// hash in the condition. It sets lastHeartbeatAt (and updatedAt, version)
// and the health index key to indexDeadline; DynamoDB writes the index
// only when that value changes, so the caller moves the key lazily by
// passing the same value until it must move. applied is false when the
// condition failed: rec is then the stored record (ErrNotFound when there
// is none), for the caller to tell a wrong token from a wrong state.
//
// A write saved with its reply lost is retried by the SDK; the retry fails
// the condition against the write itself (lastHeartbeatAt is already now)
// and recognises it, so one heartbeat is one version, as for every write.
func (s *GameInstances) Heartbeat(ctx context.Context, id, tokenHash string, now, indexDeadline time.Time) (rec gameinstance.Record, applied bool, err error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.table),
		Key:              key(id),
		UpdateExpression: aws.String("SET lastHeartbeatAt = :now, updatedAt = :now, healthDeadline = :deadline, #v = if_not_exists(#v, :zero) + :one"),
		// attribute_exists(healthShard): a Linked record without its index
		// key (written before there was one) takes the full path instead.
		ConditionExpression: aws.String("#state = :linked AND partnerGameTokenHash = :hash AND attribute_exists(healthShard) AND " +
			"(attribute_not_exists(lastHeartbeatAt) OR lastHeartbeatAt <> :now)"),
		ExpressionAttributeNames: map[string]string{"#state": "state", "#v": "version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":      &types.AttributeValueMemberS{Value: formatTime(now)},
			":deadline": &types.AttributeValueMemberN{Value: formatInt(indexDeadline.UnixMilli())},
			":zero":     &types.AttributeValueMemberN{Value: "0"},
			":one":      &types.AttributeValueMemberN{Value: "1"},
			":linked":   &types.AttributeValueMemberS{Value: string(gameinstance.StateLinked)},
			":hash":     &types.AttributeValueMemberS{Value: tokenHash},
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		stored, err := s.conflicting(ctx, id, ccf)
		ours := err == nil && stored.State == gameinstance.StateLinked && stored.PartnerGameTokenHash == tokenHash &&
			formatTime(stored.LastHeartbeatAt) == formatTime(now) && ccf.Item != nil && sameValue(ccf.Item["healthDeadline"],
			&types.AttributeValueMemberN{Value: formatInt(indexDeadline.UnixMilli())})
		return stored, ours, err
	}
	if err != nil {
		return gameinstance.Record{}, false, fmt.Errorf("heartbeat %s: %w", id, err)
	}
	rec, err = decode(out.Attributes)
	return rec, err == nil, err
}
