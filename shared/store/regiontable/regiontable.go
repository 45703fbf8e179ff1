// Package regiontable is region health's DynamoDB table
// (REGION_HEALTH_TABLE): one item per region, its breaker state.
package regiontable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// DB is the part of the DynamoDB client the store uses.
type DB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// Table keeps one item per region in a table keyed by region.
type Table struct {
	db     DB
	table  string
	policy regionhealth.BreakerPolicy
	// Unprocessed BatchGetItem keys are retried this many times, backing off.
	retries int
	backoff time.Duration
}

var _ regionhealth.Store = (*Table)(nil)

// New uses table through db; p is complete (config resolves it), and only
// the writes read it.
func New(db DB, table string, p regionhealth.BreakerPolicy) *Table {
	return &Table{db: db, table: table, policy: p, retries: 5, backoff: 50 * time.Millisecond}
}

// Get reads the regions with strongly consistent reads, so a caller sees a
// breaker another Lambda has just opened.
func (s *Table) Get(ctx context.Context, regions []string) (map[string]regionhealth.Health, error) {
	out := make(map[string]regionhealth.Health, len(regions))
	var keys []map[string]types.AttributeValue
	for _, r := range regions {
		if _, dup := out[r]; dup {
			continue // BatchGetItem rejects duplicate keys
		}
		out[r] = regionhealth.Health{Region: r, State: regionhealth.RegionInitialized}
		keys = append(keys, regionKey(r))
	}
	// BatchGetItem takes at most 100 keys.
	for start := 0; start < len(keys); start += 100 {
		if err := s.batchGet(ctx, keys[start:min(start+100, len(keys))], out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Table) batchGet(ctx context.Context, keys []map[string]types.AttributeValue, out map[string]regionhealth.Health) error {
	pending := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	return store.RetryUnprocessed(ctx, s.retries, s.backoff, "batch get "+s.table, "keys", func() (int, error) {
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return 0, err
		}
		for _, av := range res.Responses[s.table] {
			h, err := decodeRegion(av)
			if err != nil {
				return 0, err
			}
			out[h.Region] = h
		}
		pending = res.UnprocessedKeys
		return len(pending[s.table].Keys), nil
	})
}

// List scans the table: it holds one small item per region.
func (s *Table) List(ctx context.Context) ([]regionhealth.Health, error) {
	var all []regionhealth.Health
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", s.table, err)
		}
		for _, av := range page.Items {
			h, err := decodeRegion(av)
			if err != nil {
				return nil, err
			}
			all = append(all, h)
		}
	}
	return all, nil
}

// regionWrite is one UpdateItem on a region's item.
type regionWrite struct {
	update string
	cond   string // empty: unconditional
	values map[string]types.AttributeValue
}

// apply runs w and returns the item after it. When the condition fails, ok
// is false and the item is the current one, so callers can tell what
// another writer did without a second round trip.
func (s *Table) apply(ctx context.Context, region string, w regionWrite) (h regionhealth.Health, ok bool, err error) {
	names, err := regionNamesIn(w.update, w.cond)
	if err != nil {
		return regionhealth.Health{}, false, err
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       regionKey(region),
		UpdateExpression:          aws.String(w.update),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: w.values,
		ReturnValues:              types.ReturnValueAllNew,
	}
	if w.cond != "" {
		in.ConditionExpression = aws.String(w.cond)
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	out, err := s.db.UpdateItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if ccf.Item == nil {
			// No item yet, or a backend that omits ALL_OLD: read it.
			h, err = s.getOne(ctx, region)
			return h, false, err
		}
		h, err = decodeRegion(ccf.Item)
		return h, false, err
	}
	if err != nil {
		return regionhealth.Health{}, false, err
	}
	h, err = decodeRegion(out.Attributes)
	return h, true, err
}

func (s *Table) getOne(ctx context.Context, region string) (regionhealth.Health, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: regionKey(region), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return regionhealth.Health{}, fmt.Errorf("get %s: %w", region, err)
	}
	if out.Item == nil {
		return regionhealth.Health{Region: region, State: regionhealth.RegionInitialized}, nil
	}
	return decodeRegion(out.Item)
}
