package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// duePage bounds one Query page, so one call never holds more than this
// many keys in flight however far behind a shard is.
const duePage = 1000

// HealthShards (the method) tells the health sweep how many shards Due
// takes.
func (s *GameInstances) HealthShards() int { return HealthShards }

// Due lists up to limit game instances of one health shard whose deadline
// has passed, oldest deadline first, through the sparse HealthDeadlineIndex.
// It continues after cursor ("" starts at the shard's beginning) and returns
// the cursor to continue from, "" once the shard has nothing more. On an
// error it returns what it found before it.
func (s *GameInstances) Due(ctx context.Context, shard int, now time.Time, limit int, cursor string) ([]string, string, error) {
	if shard < 0 || shard >= HealthShards {
		return nil, "", fmt.Errorf("health shard %d out of range 0..%d", shard, HealthShards-1)
	}
	if limit <= 0 {
		return nil, cursor, nil
	}
	name := fmt.Sprintf("%02d", shard)
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		IndexName:              aws.String(HealthIndex),
		KeyConditionExpression: aws.String("healthShard = :shard AND healthDeadline <= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":shard": &types.AttributeValueMemberS{Value: name},
			":now":   &types.AttributeValueMemberN{Value: formatInt(now.UnixMilli())},
		},
	}
	if cursor != "" {
		start, err := decodeDueCursor(name, cursor)
		if err != nil {
			return nil, "", err
		}
		in.ExclusiveStartKey = start
	}
	var ids []string
	for len(ids) < limit {
		in.Limit = aws.Int32(int32(min(limit-len(ids), duePage)))
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return ids, "", fmt.Errorf("query %s shard %s: %w", HealthIndex, name, err)
		}
		for _, item := range page.Items {
			if id, ok := item["gameInstanceId"].(*types.AttributeValueMemberS); ok {
				ids = append(ids, id.Value)
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return ids, "", nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	next, err := encodeDueCursor(in.ExclusiveStartKey)
	return ids, next, err
}

// A due cursor is the last key read, "<healthDeadline>/<gameInstanceId>":
// with the shard it is the index's ExclusiveStartKey. A string keeps
// DynamoDB's types out of the sweep.
func encodeDueCursor(key map[string]types.AttributeValue) (string, error) {
	deadline, ok1 := key["healthDeadline"].(*types.AttributeValueMemberN)
	id, ok2 := key["gameInstanceId"].(*types.AttributeValueMemberS)
	if !ok1 || !ok2 {
		return "", errors.New("health index page ended on a key without healthDeadline and gameInstanceId")
	}
	return deadline.Value + "/" + id.Value, nil
}

func decodeDueCursor(shard, cursor string) (map[string]types.AttributeValue, error) {
	deadline, id, ok := strings.Cut(cursor, "/")
	if _, err := strconv.ParseInt(deadline, 10, 64); !ok || err != nil || id == "" {
		return nil, fmt.Errorf("malformed health index cursor %q", cursor)
	}
	return map[string]types.AttributeValue{
		"healthShard":    &types.AttributeValueMemberS{Value: shard},
		"healthDeadline": &types.AttributeValueMemberN{Value: deadline},
		"gameInstanceId": &types.AttributeValueMemberS{Value: id},
	}, nil
}
