package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// kept is a front door's table of what it keeps beside the records (a
// match, a placement): one item per id, written by one conditional
// PutItem, read back whole, expiring (expiresAt) retention after.
type kept struct {
	db    MatchesDB
	table string
	key   string // the key attribute
	what  string // for errors: "match", "placement"
	// retention is how long an item is kept (expiresAt, the TTL).
	retention time.Duration
	now       func() time.Time
}

// put writes item (id's) unless condition refuses it: stored is false then.
func (k kept) put(ctx context.Context, id string, item any, condition string, values map[string]types.AttributeValue) (stored bool, err error) {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return false, fmt.Errorf("encode %s %s: %w", k.what, id, err)
	}
	_, err = k.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(k.table), Item: av,
		ConditionExpression: aws.String(condition), ExpressionAttributeValues: values})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("keep %s %s: %w", k.what, id, err)
	}
	return true, nil
}

// get reads id's item into into, or gameinstance.ErrNotFound.
func (k kept) get(ctx context.Context, id string, into any) error {
	out, err := k.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(k.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{k.key: &types.AttributeValueMemberS{Value: id}}})
	if err != nil {
		return fmt.Errorf("read %s %s: %w", k.what, id, err)
	}
	if len(out.Item) == 0 {
		return gameinstance.ErrNotFound
	}
	if err := attributevalue.UnmarshalMap(out.Item, into); err != nil {
		return fmt.Errorf("decode %s %s: %w", k.what, id, err)
	}
	return nil
}

// expiry is an item written now: its createdAt and expiresAt (seconds).
func (k kept) expiry() (createdAt, expiresAt int64) {
	now := k.now()
	return now.Unix(), now.Add(k.retention).Unix()
}
