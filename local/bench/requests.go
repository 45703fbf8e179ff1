package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// RequestsResult is the DynamoDB and Secrets Manager traffic of the
// allocate handler, counted by SDK middleware, and the figures per
// allocation the report draws from it.
type RequestsResult struct {
	GameInstancesTable, RegionHealthTable string
	GameServersTable                      string
	WarmUp                                Phase // the first allocation of a fresh sandbox: token fetch, first health read
	Fresh, Replay, Fallback               Phase
	Rows                                  []RequestRow
	CapacityReturned                      bool // DynamoDB Local answered ReturnConsumedCapacity

	FreshRequests, FreshTableUnits, FreshIndexUnits float64 // on the game instances table
	FreshHealthReads                                float64 // region-health BatchGetItems per fresh allocation
	// FreshRoomQueries are the FreeRoomsIndex Queries per fresh
	// allocation: rooms are looked for in each region asked, before its
	// Allocator (the bench's servers offer none, so each finds nothing).
	FreshRoomQueries                          float64
	HealthReadCalls                           int     // the same, in all
	HealthReadRRU                             float64 // what one region-health read cost
	ReplayRequests                            float64
	FallbackHealthWrites, FallbackHealthReads float64
	FallbackExtra                             float64 // requests a fallback adds to a fresh allocation
	// RecordBytes is the size of a stored Allocated record by DynamoDB's
	// rules; RecordUnits what writing it, or failing a conditional write on
	// it (DynamoDB returns no capacity with that error), is charged.
	RecordBytes, RecordUnits int
}

// MeasureRequests runs n fresh allocations, n replays of them and n/2
// fallback allocations through the in-process handler.
func MeasureRequests(ctx context.Context, s *Stack, n int, log io.Writer) (RequestsResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	ip, err := NewInProcess(s)
	if err != nil {
		return RequestsResult{}, err
	}
	gi, rh := s.Tables["GameInstancesTable"], s.Tables["RegionHealthTable"]
	res := RequestsResult{GameInstancesTable: gi, RegionHealthTable: rh, GameServersTable: s.Tables["GameServersTable"]}
	run := runID()
	phase := func(label string, n int, id func(i int) string, region string) (Phase, error) {
		ip.Counter.Take()
		var took []time.Duration
		start := time.Now()
		for i := range n {
			_, d, err := ip.Allocate(ctx, id(i), region)
			if err != nil {
				return Phase{}, fmt.Errorf("in-process allocate: %w", err)
			}
			took = append(took, d)
		}
		p := Phase{N: n, Elapsed: time.Since(start), Took: Summarize(took), Ops: ip.Counter.Take()}
		res.addRows(fmt.Sprintf(label, n), p)
		return p, nil
	}
	fresh := func(i int) string { return fmt.Sprintf("req-%s-%d", run, i) }
	if res.WarmUp, err = phase("first call of a new sandbox (%d)", 1, func(int) string { return "req-warm-" + run }, RegionOK); err != nil {
		return res, err
	}
	if res.Fresh, err = phase("fresh (%d)", n, fresh, RegionOK); err != nil {
		return res, err
	}
	if res.Replay, err = phase("replay (%d)", n, fresh, RegionOK); err != nil {
		return res, err
	}
	fallback := func(i int) string { return fmt.Sprintf("req-fb-%s-%d", run, i) }
	if res.Fallback, err = phase("fallback (%d)", max(n/2, 1), fallback, RegionDown); err != nil {
		return res, err
	}
	if res.RecordBytes, err = recordSize(ctx, s, fresh(0)); err != nil {
		return res, err
	}
	res.derive()
	progress(log, "requests: fresh allocation = %.2f DynamoDB requests on %s (%.2f capacity units), replay = %.2f, record %d bytes",
		res.FreshRequests, gi, res.FreshTableUnits+res.FreshIndexUnits, res.ReplayRequests, res.RecordBytes)
	return res, nil
}

func (r *RequestsResult) addRows(label string, p Phase) {
	r.Rows = append(r.Rows, requestRows(label, p)...)
}

// derive computes the figures per allocation from the phases.
func (r *RequestsResult) derive() {
	gi, rh := r.GameInstancesTable, r.RegionHealthTable
	r.FreshRequests, r.FreshTableUnits, r.FreshIndexUnits = r.Fresh.perAlloc(gi, "")
	r.FreshHealthReads, _, _ = r.Fresh.perAlloc(rh, "")
	r.FreshRoomQueries, _, _ = r.Fresh.perAlloc(r.GameServersTable, "Query")
	r.HealthReadCalls = int(r.FreshHealthReads*float64(r.Fresh.N) + 0.5)
	r.ReplayRequests, _, _ = r.Replay.perAlloc(gi, "")
	r.FallbackHealthWrites, _, _ = r.Fallback.perAlloc(rh, "UpdateItem")
	r.FallbackHealthReads, _, _ = r.Fallback.perAlloc(rh, "BatchGetItem")
	r.FallbackExtra = r.FallbackHealthWrites + r.FallbackHealthReads - r.FreshHealthReads
	r.RecordUnits = WriteUnits(r.RecordBytes)
	for _, op := range r.Fresh.Ops {
		r.CapacityReturned = r.CapacityReturned || op.CapacityReturned
	}
	// In the fallback phase every allocation re-reads (its failure dropped
	// the cache), so its reads are the cleanest sample.
	for _, p := range []Phase{r.Fallback, r.Fresh, r.WarmUp} {
		if calls, table, index := p.perAlloc(rh, "BatchGetItem"); calls > 0 {
			r.HealthReadRRU = (table + index) / calls
			break
		}
	}
}

// WriteUnits is what writing (or failing a conditional write on) an item of
// size bytes costs: one unit per started KB, at least one.
func WriteUnits(size int) int { return max(1, (size+1023)/1024) }

// recordSize reads one stored record and sizes it by DynamoDB's rules.
func recordSize(ctx context.Context, s *Stack, id string) (int, error) {
	out, err := s.DDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Tables["GameInstancesTable"]),
		Key: map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: id}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, fmt.Errorf("read record %s: %w", id, err)
	}
	if out.Item == nil {
		return 0, fmt.Errorf("record %s was not stored", id)
	}
	return store.ItemSize(out.Item), nil
}
