package store

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Finish writes the outcome only while rec.ClaimID still holds the claim,
// and returns the record as stored. When rec.Version is the claim's as
// stored (Claim returned it, and nothing wrote the record since), the
// outcome is the whole item, version and createdAt included: one
// conditional PutItem, the cheapest write DynamoDB has (no expression
// to parse), and no record sent back. Otherwise (0) it is an UpdateItem
// that counts the version on from the stored one and sends the record
// back.
func (s *GameInstances) Finish(ctx context.Context, rec gameinstance.Record) (gameinstance.Record, error) {
	names := map[string]string{"#c_state": "state"}
	values := map[string]types.AttributeValue{
		":c_claim":      &types.AttributeValueMemberS{Value: rec.ClaimID},
		":c_allocating": &types.AttributeValueMemberS{Value: string(gameinstance.StateAllocating)},
	}
	const condition = "claimId = :c_claim AND #c_state = :c_allocating"
	var attrs map[string]types.AttributeValue
	var err error
	if rec.Version != 0 {
		rec.Version++
		attrs, err = s.putOutcome(ctx, rec, condition, names, values)
	} else {
		attrs, err = s.updateOutcome(ctx, rec, condition, names, values)
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		stored, err := s.conflicting(ctx, rec.GameInstanceID, ccf)
		if err == nil && stored.FinishedBy(rec.ClaimID, rec.State) {
			// Our own outcome, saved with its reply lost (or already
			// moved on by the game server's link).
			return stored, nil
		}
		return gameinstance.Record{}, fmt.Errorf("finish %s: %w", rec.GameInstanceID, gameinstance.ErrClaimLost)
	}
	if err != nil {
		return gameinstance.Record{}, fmt.Errorf("finish %s: %w", rec.GameInstanceID, err)
	}
	if attrs == nil {
		return toItem(rec).record(), nil // as the table holds it (times in ms, TTL in s)
	}
	return decode(attrs)
}

// putOutcome writes rec whole under condition; nothing comes back.
func (s *GameInstances) putOutcome(ctx context.Context, rec gameinstance.Record, condition string, names map[string]string, values map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	item, err := Encode(rec)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", rec.GameInstanceID, err)
	}
	if size := ItemSize(item); size > MaxItemBytes-itemSizeMargin {
		return nil, fmt.Errorf("write %s (%d bytes): %w", rec.GameInstanceID, size, gameinstance.ErrTooLarge)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String(condition),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}, outcomeWrite)
	return nil, err
}

// updateOutcome sets rec's attributes under condition and returns the
// record as stored.
func (s *GameInstances) updateOutcome(ctx context.Context, rec gameinstance.Record, condition string, names map[string]string, values map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	in, err := s.update(rec, "createdAt")
	if err != nil {
		return nil, err
	}
	in.ConditionExpression = aws.String(condition)
	maps.Copy(in.ExpressionAttributeNames, names)
	maps.Copy(in.ExpressionAttributeValues, values)
	in.ReturnValues = types.ReturnValueAllNew
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := s.db.UpdateItem(ctx, in, outcomeWrite)
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}
