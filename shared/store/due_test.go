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
	if err != nil || len(ids) != 1200 || ids[0] != "gi-0" || ids[1199] != "gi-1199" || next == "" {
		t.Fatalf("first call = %d ids (%v…), next %q, %v", len(ids), ids[:min(2, len(ids))], next, err)
	}
	if !slices.Equal(db.limits, []int32{duePage, 200}) {
		t.Fatalf("page limits = %v, want [%d 200]: pages stay bounded and stop at limit", db.limits, duePage)
	}
	more, next, err := s.Due(context.Background(), 7, now, 5000, next)
	if err != nil || len(more) != 1300 || more[0] != "gi-1200" || next != "" {
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
