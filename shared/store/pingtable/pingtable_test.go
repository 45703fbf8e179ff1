package pingtable

import (
	"context"
	"fmt"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// throttlingDB answers every BatchWriteItem by leaving its first item
// unprocessed until `throttle` calls have been made — DynamoDB Local never
// throttles, so this path needs a fake.
type throttlingDB struct {
	throttle int
	calls    int
	written  int
}

func (f *throttlingDB) Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return &dynamodb.ScanOutput{}, nil
}

func (f *throttlingDB) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.calls++
	reqs := in.RequestItems["Ping"]
	if len(reqs) > 25 {
		panic("batch larger than 25")
	}
	if f.calls <= f.throttle {
		f.written += len(reqs) - 1
		return &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{"Ping": reqs[:1]}}, nil
	}
	f.written += len(reqs)
	return &dynamodb.BatchWriteItemOutput{}, nil
}

func entries(n int) []pingcache.Entry {
	var out []pingcache.Entry
	for i := range n {
		out = append(out, pingcache.Entry{Region: strings.Repeat("r", i+1), ExpiresAt: time.Unix(1, 0)})
	}
	return out
}

func TestReplaceRetriesUnprocessedItems(t *testing.T) {
	tests := []struct {
		name      string
		regions   int
		throttle  int
		wantErr   bool
		wantCalls int
	}{
		{"one batch, no throttling", 3, 0, false, 1},
		{"two batches of 25 and 5", 30, 0, false, 2},
		{"retried until processed", 3, 2, false, 3},
		{"gives up after the bounded retries", 3, 100, true, 6},
	}
	for _, tc := range tests {
		db := &throttlingDB{throttle: tc.throttle}
		s := New(db, "Ping")
		s.backoff = time.Microsecond
		_, err := s.Replace(context.Background(), entries(tc.regions))
		if (err != nil) != tc.wantErr || db.calls != tc.wantCalls {
			t.Errorf("%s: err %v after %d calls; want err %v after %d", tc.name, err, db.calls, tc.wantErr, tc.wantCalls)
		}
		if !tc.wantErr && db.written != tc.regions {
			t.Errorf("%s: wrote %d of %d", tc.name, db.written, tc.regions)
		}
	}
}

// TestPingItemStaysSmall: the largest region item the ping decoder lets
// through stays far below DynamoDB's 400 KB item limit.
func TestPingItemStaysSmall(t *testing.T) {
	e := pingcache.Entry{Region: strings.Repeat("r", region.MaxName), Zone: strings.Repeat("Z", 64),
		RefreshedAt: time.Now(), ExpiresAt: time.Now()}
	for i := range gamefabric.MaxPingTargets {
		e.Targets = append(e.Targets, gamefabric.PingTarget{Address: fmt.Sprintf("%0*d", gamefabric.MaxAddressLen, i), Port: 65535,
			Protocol: strings.Repeat("p", gamefabric.MaxPingProtocol)})
	}
	av, err := encodePingItem(e)
	if err != nil {
		t.Fatal(err)
	}
	if size := store.ItemSize(av); size > 32<<10 {
		t.Fatalf("largest ping item is %d bytes, want at most 32 KB", size)
	}
}
