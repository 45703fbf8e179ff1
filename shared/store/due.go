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

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// duePage bounds one Query page, so one call never holds more than this
// many keys in flight however far behind a shard is.
const duePage = 1000

// HealthShards (the method) tells the health sweep how many shards Due
// takes.
func (s *GameInstances) HealthShards() int { return HealthShards }

// Due lists up to limit game instances of one health shard whose index key
// (healthDeadline) is at or before now, oldest first, through the sparse
// HealthDeadlineIndex: the instances the sweep must look at, every Linked
// one among them (its key stays put while it heartbeats). It continues
// after cursor ("" starts at the shard's beginning) and returns the cursor
// to continue from, "" once the shard has nothing more. On an error it
// returns what it found before it.
func (s *GameInstances) Due(ctx context.Context, shard int, now time.Time, limit int, cursor string) ([]gameinstance.IndexEntry, string, error) {
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
	var found []gameinstance.IndexEntry
	for len(found) < limit {
		in.Limit = aws.Int32(int32(min(limit-len(found), duePage)))
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return found, "", fmt.Errorf("query %s shard %s: %w", HealthIndex, name, err)
		}
		for _, item := range page.Items {
			if e, ok := indexEntry(item); ok {
				found = append(found, e)
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return found, "", nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	next, err := encodeDueCursor(in.ExclusiveStartKey)
	return found, next, err
}

// indexEntry reads one KEYS_ONLY item of the health index.
func indexEntry(item map[string]types.AttributeValue) (gameinstance.IndexEntry, bool) {
	id, ok1 := item["gameInstanceId"].(*types.AttributeValueMemberS)
	at, ok2 := item["healthDeadline"].(*types.AttributeValueMemberN)
	if !ok1 || !ok2 {
		return gameinstance.IndexEntry{}, false
	}
	ms, err := strconv.ParseInt(at.Value, 10, 64)
	return gameinstance.IndexEntry{ID: id.Value, Deadline: time.UnixMilli(ms).UTC()}, err == nil
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

// healthAttributes are what lifecycle.Policy.Review decides an instance's
// health by. The sweep's first look at an instance reads these alone: it
// costs what reading the whole item costs, but carries no upstream texts.
const healthAttributes = "gameInstanceId, #state, updatedAt, linkedAt, lastHeartbeatAt, leaseExpiresAt, queuedUntil, healthDeadline, roomServer"

// healthBatch is BatchGetItem's most keys per call.
const healthBatch = 100

// HealthOf reads what decides the health of the instances ids
// (healthAttributes), eventually consistently: BatchGetItem, 100 keys a
// call, half a read unit per record under 4 KB. The health sweep uses it
// to tell which instances are overdue; it reads an overdue one again,
// strongly consistently, before it writes. Ids without a record are left
// out; a record it cannot decode comes back with its id alone, no state,
// for the sweep's strongly consistent review to report; what DynamoDB
// leaves unprocessed is asked again (a few times, backing off) before the
// read fails. A Linked session holding a room has its server's last beat
// folded in, as Get folds it (the servers read in batches too).
func (s *GameInstances) HealthOf(ctx context.Context, ids []string) ([]gameinstance.Record, error) {
	var keys []map[string]types.AttributeValue
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !seen[id] { // BatchGetItem rejects duplicate keys
			seen[id] = true
			keys = append(keys, key(id))
		}
	}
	out := make([]gameinstance.Record, 0, len(keys))
	for start := 0; start < len(keys); start += healthBatch {
		pending := map[string]types.KeysAndAttributes{s.table: {Keys: keys[start:min(start+healthBatch, len(keys))],
			ProjectionExpression: aws.String(healthAttributes), ExpressionAttributeNames: map[string]string{"#state": "state"}}}
		err := RetryUnprocessed(ctx, 5, 50*time.Millisecond, "batch get "+s.table, "keys", func() (int, error) {
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
			if err != nil {
				return 0, err
			}
			for _, av := range res.Responses[s.table] {
				out = append(out, healthRecord(av))
			}
			pending = res.UnprocessedKeys
			return len(pending[s.table].Keys), nil
		})
		if err != nil {
			return out, err
		}
	}
	// A session on a rooms server heartbeats through the server's record.
	return out, s.foldServerBeats(ctx, out, false)
}

// healthRecord decodes healthAttributes by hand, not by reflection: a run
// may read tens of thousands of records on a fraction of a vCPU. A record
// with an attribute of another type keeps its id alone, no state.
func healthRecord(av map[string]types.AttributeValue) gameinstance.Record {
	str := func(name string) (string, bool) {
		v, ok := av[name].(*types.AttributeValueMemberS)
		if !ok {
			return "", av[name] == nil
		}
		return v.Value, true
	}
	num := func(name string) (int64, bool) {
		v, ok := av[name].(*types.AttributeValueMemberN)
		if !ok {
			return 0, av[name] == nil
		}
		n, err := strconv.ParseInt(v.Value, 10, 64)
		return n, err == nil
	}
	id, _ := str("gameInstanceId")
	state, ok1 := str("state")
	updated, ok2 := str("updatedAt")
	linked, ok3 := str("linkedAt")
	beat, ok4 := str("lastHeartbeatAt")
	lease, ok5 := num("leaseExpiresAt")
	until, ok6 := num("queuedUntil")
	deadline, ok7 := num("healthDeadline")
	room, ok8 := str("roomServer")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 || !ok8 {
		return gameinstance.Record{GameInstanceID: id}
	}
	it := item{GameInstanceID: id, State: state, UpdatedAt: updated, LinkedAt: linked, LastHeartbeatAt: beat,
		LeaseExpiresAt: lease, QueuedUntil: until, HealthDeadline: deadline, RoomServer: room}
	return it.record()
}
