package regionhealth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// DB is the part of the DynamoDB client the store uses.
type DB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// DynamoStore keeps one item per region in a table keyed by region.
type DynamoStore struct {
	db     DB
	table  string
	policy BreakerPolicy
	// Unprocessed BatchGetItem keys are retried this many times, backing off.
	retries int
	backoff time.Duration
}

var _ Store = (*DynamoStore)(nil)

// NewDynamoStore uses table through db; unset policy fields get defaults.
func NewDynamoStore(db DB, table string, p BreakerPolicy) *DynamoStore {
	return &DynamoStore{db: db, table: table, policy: p.WithDefaults(), retries: 5, backoff: 50 * time.Millisecond}
}

// Get reads the regions with strongly consistent reads, so a caller sees a
// breaker another Lambda has just opened.
func (s *DynamoStore) Get(ctx context.Context, regions []string) (map[string]Health, error) {
	out := make(map[string]Health, len(regions))
	var keys []map[string]types.AttributeValue
	for _, r := range regions {
		if _, dup := out[r]; dup {
			continue // BatchGetItem rejects duplicate keys
		}
		out[r] = Health{Region: r, State: RegionInitialized}
		keys = append(keys, key(r))
	}
	// BatchGetItem takes at most 100 keys.
	for start := 0; start < len(keys); start += 100 {
		if err := s.batchGet(ctx, keys[start:min(start+100, len(keys))], out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *DynamoStore) batchGet(ctx context.Context, keys []map[string]types.AttributeValue, out map[string]Health) error {
	pending := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			if attempt > s.retries {
				return fmt.Errorf("batch get %s: %d keys still unprocessed after %d retries", s.table, len(pending[s.table].Keys), s.retries)
			}
			if err := wait.Sleep(ctx, s.backoff<<(attempt-1)); err != nil {
				return fmt.Errorf("batch get %s: %w", s.table, err)
			}
		}
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return fmt.Errorf("batch get %s: %w", s.table, err)
		}
		for _, av := range res.Responses[s.table] {
			h, err := decode(av)
			if err != nil {
				return err
			}
			out[h.Region] = h
		}
		pending = res.UnprocessedKeys
	}
	return nil
}

// List scans the table: it holds one small item per region.
func (s *DynamoStore) List(ctx context.Context) ([]Health, error) {
	var all []Health
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", s.table, err)
		}
		for _, av := range page.Items {
			h, err := decode(av)
			if err != nil {
				return nil, err
			}
			all = append(all, h)
		}
	}
	return all, nil
}

// write is one UpdateItem on a region's item.
type write struct {
	update string
	cond   string // empty: unconditional
	values map[string]types.AttributeValue
}

// apply runs w and returns the item after it. When the condition fails, ok
// is false and the item is the current one, so callers can tell what
// another writer did without a second round trip.
func (s *DynamoStore) apply(ctx context.Context, region string, w write) (h Health, ok bool, err error) {
	names, err := namesIn(w.update, w.cond)
	if err != nil {
		return Health{}, false, err
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(region),
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
		h, err = decode(ccf.Item)
		return h, false, err
	}
	if err != nil {
		return Health{}, false, err
	}
	h, err = decode(out.Attributes)
	return h, true, err
}

func (s *DynamoStore) getOne(ctx context.Context, region string) (Health, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(region), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Health{}, fmt.Errorf("get %s: %w", region, err)
	}
	if out.Item == nil {
		return Health{Region: region, State: RegionInitialized}, nil
	}
	return decode(out.Item)
}
