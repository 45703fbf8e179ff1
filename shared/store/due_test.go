package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// indexDB answers Query like the health index of one shard: keys in
// deadline order, pages of at most Limit, a LastEvaluatedKey whenever a
// page reached its Limit. DynamoDB Local covers the real thing; this
// checks the paging and the cursor without one.
type indexDB struct {
	DynamoDB
	shard     string
	deadlines []int64 // ascending; ids are "gi-<i>"
	limits    []int32
	fail      bool
}

func (f *indexDB) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if f.fail {
		return nil, errors.New("throttled")
	}
	f.limits = append(f.limits, *in.Limit)
	if got := in.ExpressionAttributeValues[":shard"].(*types.AttributeValueMemberS).Value; got != f.shard {
		return &dynamodb.QueryOutput{}, nil
	}
	now, _ := strconv.ParseInt(in.ExpressionAttributeValues[":now"].(*types.AttributeValueMemberN).Value, 10, 64)
	from := 0
	if k := in.ExclusiveStartKey; k != nil {
		if k["healthShard"].(*types.AttributeValueMemberS).Value != f.shard {
			return nil, errors.New("start key of another shard")
		}
		id := k["gameInstanceId"].(*types.AttributeValueMemberS).Value
		for i := range f.deadlines {
			if fmt.Sprintf("gi-%d", i) == id {
				from = i + 1
			}
		}
	}
	out := &dynamodb.QueryOutput{}
	for i := from; i < len(f.deadlines) && f.deadlines[i] <= now; i++ {
		key := map[string]types.AttributeValue{
			"gameInstanceId": &types.AttributeValueMemberS{Value: fmt.Sprintf("gi-%d", i)},
			"healthShard":    &types.AttributeValueMemberS{Value: f.shard},
			"healthDeadline": &types.AttributeValueMemberN{Value: strconv.FormatInt(f.deadlines[i], 10)},
		}
		out.Items = append(out.Items, key)
		if len(out.Items) == int(*in.Limit) {
			out.LastEvaluatedKey = key
			break
		}
	}
	return out, nil
}

func TestDuePagesAndContinuesFromItsCursor(t *testing.T) {
	now := time.UnixMilli(10_000)
	db := &indexDB{shard: "07"}
	for i := range 2500 {
		db.deadlines = append(db.deadlines, int64(i)) // all due
	}
	db.deadlines = append(db.deadlines, 20_000, 30_000) // not yet due
	s := NewGameInstances(db, "t")

	ids, next, err := s.Due(context.Background(), 7, now, 1200, "")
	if err != nil || len(ids) != 1200 || ids[0].ID != "gi-0" || ids[1199].ID != "gi-1199" || !ids[1199].Deadline.Equal(time.UnixMilli(1199)) || next == "" {
		t.Fatalf("first call = %d ids (%v…), next %q, %v", len(ids), ids[:min(2, len(ids))], next, err)
	}
	if !slices.Equal(db.limits, []int32{duePage, 200}) {
		t.Fatalf("page limits = %v, want [%d 200]: pages stay bounded and stop at limit", db.limits, duePage)
	}
	more, next, err := s.Due(context.Background(), 7, now, 5000, next)
	if err != nil || len(more) != 1300 || more[0].ID != "gi-1200" || next != "" {
		t.Fatalf("continued call = %d ids (first %v), next %q, %v; want the other 1300 and no cursor", len(more), more[:1], next, err)
	}
	if ids, next, err := s.Due(context.Background(), 3, now, 10, ""); err != nil || len(ids) != 0 || next != "" {
		t.Fatalf("another shard = %v, %q, %v", ids, next, err)
	}
	for _, bad := range []string{"x/gi-1", "12", "12/"} {
		if _, _, err := s.Due(context.Background(), 7, now, 10, bad); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
	if _, _, err := s.Due(context.Background(), HealthShards, now, 10, ""); err == nil {
		t.Error("shard out of range accepted")
	}
	db.fail = true
	if _, _, err := s.Due(context.Background(), 7, now, 10, ""); err == nil {
		t.Error("a failed query was not reported")
	}
}

// batchDB answers BatchGetItem from items, leaving the last key of each
// call's first answer unprocessed, as a throttled DynamoDB may.
type batchDB struct {
	DynamoDB
	items map[string]map[string]types.AttributeValue
	calls []int // keys per call
	held  map[string]bool
}

func (f *batchDB) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	ka := in.RequestItems["t"]
	if ka.ConsistentRead != nil && *ka.ConsistentRead || ka.ProjectionExpression == nil {
		return nil, errors.New("want an eventually consistent read of the health attributes")
	}
	f.calls = append(f.calls, len(ka.Keys))
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	for i, k := range ka.Keys {
		id := k["gameInstanceId"].(*types.AttributeValueMemberS).Value
		if i == len(ka.Keys)-1 && !f.held[id] {
			f.held[id] = true
			out.UnprocessedKeys = map[string]types.KeysAndAttributes{"t": {Keys: ka.Keys[i:], ProjectionExpression: ka.ProjectionExpression}}
			break
		}
		if item, ok := f.items[id]; ok {
			out.Responses["t"] = append(out.Responses["t"], item)
		}
	}
	return out, nil
}

func TestHealthOfReadsInBatchesAndDecodesByHand(t *testing.T) {
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	db := &batchDB{items: map[string]map[string]types.AttributeValue{}, held: map[string]bool{}}
	var ids []string
	for i := range 230 {
		id := fmt.Sprintf("gi-%d", i)
		ids = append(ids, id)
		if i%10 == 9 {
			continue // no record
		}
		av, err := Encode(gameinstance.Record{GameInstanceID: id, State: gameinstance.StateLinked, LinkedAt: at, LastHeartbeatAt: at.Add(time.Duration(i) * time.Second),
			UpdatedAt: at, LeaseExpiresAt: at, HealthDeadline: at.Add(time.Minute), Queue: &gameinstance.Queue{Until: at.Add(time.Hour)}})
		if err != nil {
			t.Fatal(err)
		}
		db.items[id] = av
	}
	db.items["gi-3"]["state"] = &types.AttributeValueMemberN{Value: "7"}                       // not a string: unreadable
	recs, err := NewGameInstances(db, "t").HealthOf(context.Background(), append(ids, "gi-0")) // a duplicate
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(db.calls, []int{100, 1, 100, 1, 30, 1}) {
		t.Errorf("keys per call = %v; want batches of 100 and each unprocessed key asked again", db.calls)
	}
	if len(recs) != 207 {
		t.Fatalf("%d records, want the 207 that exist", len(recs))
	}
	for _, r := range recs {
		var i int
		fmt.Sscanf(r.GameInstanceID, "gi-%d", &i)
		if i == 3 {
			if r.State != "" {
				t.Errorf("an unreadable record came back as %s", r.State)
			}
			continue
		}
		if r.State != gameinstance.StateLinked || !r.LinkedAt.Equal(at) || !r.LastHeartbeatAt.Equal(at.Add(time.Duration(i)*time.Second)) ||
			!r.HealthDeadline.Equal(at.Add(time.Minute)) || r.Queue == nil || !r.Queue.Until.Equal(at.Add(time.Hour)) || !r.UpdatedAt.Equal(at) {
			t.Fatalf("%s decoded as %+v", r.GameInstanceID, r)
		}
	}
}
