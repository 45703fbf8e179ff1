package bench

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Phase is what a run of allocations cost in AWS requests.
type Phase struct {
	N        int
	Elapsed  time.Duration
	Ops      map[OpKey]OpCount
	Statuses Counts
	Took     Summary // in-process handler time per invocation
}

// PerAllocation sums calls, attempts and capacity units of the operations
// match selects, divided by the allocations in the phase.
func (p Phase) PerAllocation(match func(OpKey) bool) (calls, attempts, units float64) {
	for k, op := range p.Ops {
		if match(k) {
			calls += float64(op.Calls)
			attempts += float64(op.Attempts)
			units += op.TableUnits + op.IndexUnits
		}
	}
	n := float64(max(p.N, 1))
	return calls / n, attempts / n, units / n
}

// RequestsResult is the DynamoDB and Secrets Manager traffic of the
// allocate handler, counted by SDK middleware.
type RequestsResult struct {
	WarmUp                  Phase // the first allocation of a fresh instance: token fetch, first health read
	Fresh, Replay, Fallback Phase
	// RecordBytes is the size of a stored Allocated record by DynamoDB's
	// rules; ReplayUnits what the replay's failed conditional write is
	// charged (DynamoDB returns no capacity with the error).
	RecordBytes, ReplayUnits int
	CapacityReturned         bool // DynamoDB Local answered ReturnConsumedCapacity
	LogBytes, LogLines       float64
	GameInstancesTable       string
	RegionHealthTable        string
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
	res := RequestsResult{GameInstancesTable: s.Tables["GameInstancesTable"], RegionHealthTable: s.Tables["RegionHealthTable"]}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	phase := func(n int, id func(i int) string, region string) (Phase, error) {
		before := ip.Counter.Snapshot()
		p := Phase{N: n, Statuses: Counts{}}
		var took []time.Duration
		start := time.Now()
		for i := range n {
			status, d, err := ip.Allocate(ctx, id(i), region)
			if err != nil {
				return p, fmt.Errorf("in-process allocate: %w", err)
			}
			p.Statuses[strconv.Itoa(status)]++
			took = append(took, d)
		}
		p.Elapsed, p.Took = time.Since(start), Summarize(took)
		p.Ops = Diff(before, ip.Counter.Snapshot())
		return p, nil
	}
	if res.WarmUp, err = phase(1, func(int) string { return "req-warm-" + run }, RegionOK); err != nil {
		return res, err
	}
	logBytes, logLines := ip.Logs.counts()
	fresh := func(i int) string { return fmt.Sprintf("req-%s-%d", run, i) }
	if res.Fresh, err = phase(n, fresh, RegionOK); err != nil {
		return res, err
	}
	b, l := ip.Logs.counts()
	res.LogBytes, res.LogLines = float64(b-logBytes)/float64(n), float64(l-logLines)/float64(n)
	if res.Replay, err = phase(n, fresh, RegionOK); err != nil {
		return res, err
	}
	if res.Fallback, err = phase(max(n/2, 1), func(i int) string { return fmt.Sprintf("req-fb-%s-%d", run, i) }, RegionDown); err != nil {
		return res, err
	}
	for _, op := range res.Fresh.Ops {
		if op.CapacityReturned > 0 {
			res.CapacityReturned = true
		}
	}
	if res.RecordBytes, err = recordSize(ctx, s, fresh(0)); err != nil {
		return res, err
	}
	res.ReplayUnits = WriteUnits(res.RecordBytes)
	calls, _, units := res.Fresh.PerAllocation(onTable(res.GameInstancesTable))
	progress(log, "requests: fresh allocation = %.2f DynamoDB requests on %s (%.2f capacity units), replay = %.2f, record %d bytes",
		calls, res.GameInstancesTable, units, perAlloc(res.Replay, onTable(res.GameInstancesTable)), res.RecordBytes)
	return res, nil
}

func perAlloc(p Phase, match func(OpKey) bool) float64 {
	c, _, _ := p.PerAllocation(match)
	return c
}

// onTable matches DynamoDB operations on table.
func onTable(table string) func(OpKey) bool {
	return func(k OpKey) bool { return k.Service == "DynamoDB" && k.Table == table }
}

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
