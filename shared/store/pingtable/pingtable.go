// Package pingtable is the ping cache's DynamoDB table (PING_CACHE_TABLE):
// one item per region, read whole.
package pingtable

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// DB is the part of the DynamoDB client the ping cache uses.
type DB interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// Table keeps one item per region. The table holds a handful of items,
// so a Scan is the cheapest way to read all of it.
type Table struct {
	db    DB
	table string
	// Unprocessed batch items are retried this many times, backing off.
	retries int
	backoff time.Duration
}

var _ pingcache.Store = (*Table)(nil)

// New uses table through db.
func New(db DB, table string) *Table {
	return &Table{db: db, table: table, retries: 5, backoff: 50 * time.Millisecond}
}

type pingItem struct {
	Region      string         `dynamodbav:"region"`
	Zone        string         `dynamodbav:"zone"`
	Targets     []pingTargetAV `dynamodbav:"targets"`
	RefreshedAt string         `dynamodbav:"refreshedAt"`
	ExpiresAt   int64          `dynamodbav:"expiresAt"`
}

type pingTargetAV struct {
	Address  string `dynamodbav:"address"`
	Port     int    `dynamodbav:"port"`
	Protocol string `dynamodbav:"protocol"`
}

// List reads every item, following Scan pages.
func (s *Table) List(ctx context.Context) ([]pingcache.Entry, error) {
	var entries []pingcache.Entry
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", s.table, err)
		}
		var items []pingItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode ping cache: %w", err)
		}
		for _, it := range items {
			e := pingcache.Entry{Region: it.Region, Zone: it.Zone, RefreshedAt: store.ParseTime(it.RefreshedAt),
				ExpiresAt: time.Unix(it.ExpiresAt, 0).UTC(), Targets: make([]gamefabric.PingTarget, 0, len(it.Targets))}
			for _, t := range it.Targets {
				e.Targets = append(e.Targets, gamefabric.PingTarget{Address: t.Address, Port: t.Port, Protocol: t.Protocol})
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// Replace writes entries and deletes every other stored region, in batches
// of 25, retrying unprocessed items a bounded number of times.
func (s *Table) Replace(ctx context.Context, entries []pingcache.Entry) (int, error) {
	existing, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	keep := map[string]bool{}
	var writes []types.WriteRequest
	for _, e := range entries {
		keep[e.Region] = true
		av, err := encodePingItem(e)
		if err != nil {
			return 0, fmt.Errorf("encode region %s: %w", e.Region, err)
		}
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	removed := 0
	for _, e := range existing {
		if !keep[e.Region] {
			removed++
			writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{
				Key: map[string]types.AttributeValue{"region": &types.AttributeValueMemberS{Value: e.Region}}}})
		}
	}
	for start := 0; start < len(writes); start += 25 {
		if err := s.batch(ctx, writes[start:min(start+25, len(writes))]); err != nil {
			return 0, err
		}
	}
	return removed, nil
}

// encodePingItem is one region's item. gamefabric.DecodePing bounds what
// goes into it (TestPingItemStaysSmall).
func encodePingItem(e pingcache.Entry) (map[string]types.AttributeValue, error) {
	it := pingItem{Region: e.Region, Zone: e.Zone, RefreshedAt: store.FormatTime(e.RefreshedAt), ExpiresAt: e.ExpiresAt.Unix(),
		Targets: make([]pingTargetAV, 0, len(e.Targets))}
	for _, t := range e.Targets {
		it.Targets = append(it.Targets, pingTargetAV{Address: t.Address, Port: t.Port, Protocol: t.Protocol})
	}
	return attributevalue.MarshalMap(it)
}

func (s *Table) batch(ctx context.Context, writes []types.WriteRequest) error {
	pending := map[string][]types.WriteRequest{s.table: writes}
	return store.RetryUnprocessed(ctx, s.retries, s.backoff, "batch write "+s.table, "items", func() (int, error) {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return 0, err
		}
		pending = out.UnprocessedItems
		return len(pending[s.table]), nil
	})
}
