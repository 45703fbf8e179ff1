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

// RequestsResult is the allocate handler's DynamoDB and Secrets Manager
// traffic, counted by SDK middleware. WarmUp is a fresh sandbox's first
// allocation. RecordUnits is what writing the stored record, or failing a
// conditional write on it (which returns no capacity), is charged.
type RequestsResult struct {
	GameInstancesTable, RegionHealthTable, GameServersTable string
	WarmUp, Fresh, Replay, Fallback                         Phase
	Rows                                                    []RequestRow
	CapacityReturned                                        bool

	FreshRequests, FreshTableUnits, FreshIndexUnits          float64 // on the game instances table
	FreshHealthReads, FreshRoomQueries                       float64
	HealthReadCalls                                          int
	HealthReadRRU, ReplayRequests                            float64
	FallbackHealthWrites, FallbackHealthReads, FallbackExtra float64
	RecordBytes, RecordUnits                                 int
}

// MeasureRequests runs n fresh allocations, n replays of them and n/2
// fallback allocations through the in-process handler.
func MeasureRequests(ctx context.Context, s *Stack, n int, log io.Writer) (RequestsResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	ip, err := NewInProcess(s, nil)
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
			_, d, err := ip.Post(ctx, allocateRequest(id(i), region))
			if err != nil {
				return Phase{}, fmt.Errorf("in-process allocate: %w", err)
			}
			took = append(took, d)
		}
		p := Phase{N: n, Elapsed: time.Since(start), Took: Summarize(took), Ops: ip.Counter.Take()}
		res.Rows = append(res.Rows, requestRows(fmt.Sprintf(label, n), p)...)
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

func (r *RequestsResult) derive() {
	gi, rh := r.GameInstancesTable, r.RegionHealthTable
	fresh := r.Fresh.on(gi, "")
	r.FreshRequests, r.FreshTableUnits, r.FreshIndexUnits = fresh.Requests, fresh.Table, fresh.Index
	r.FreshHealthReads = r.Fresh.on(rh, "").Requests
	r.FreshRoomQueries = r.Fresh.on(r.GameServersTable, "Query").Requests
	r.HealthReadCalls = int(r.FreshHealthReads*float64(r.Fresh.N) + 0.5)
	r.ReplayRequests = r.Replay.on(gi, "").Requests
	r.FallbackHealthWrites = r.Fallback.on(rh, "UpdateItem").Requests
	r.FallbackHealthReads = r.Fallback.on(rh, "BatchGetItem").Requests
	r.FallbackExtra = r.FallbackHealthWrites + r.FallbackHealthReads - r.FreshHealthReads
	r.RecordUnits = max(1, (r.RecordBytes+1023)/1024) // one unit per started KB
	for _, op := range r.Fresh.Ops {
		r.CapacityReturned = r.CapacityReturned || op.CapacityReturned
	}
	// Every fallback re-reads (its failure dropped the cache): the cleanest
	// sample.
	for _, p := range []Phase{r.Fallback, r.Fresh, r.WarmUp} {
		if u := p.on(rh, "BatchGetItem"); u.Requests > 0 {
			r.HealthReadRRU = (u.Table + u.Index) / u.Requests
			break
		}
	}
}

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
