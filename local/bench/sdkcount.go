package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// OpKey names one operation on one table ("" for non-DynamoDB calls).
type OpKey struct {
	Service, Operation, Table string
}

func (k OpKey) String() string {
	if k.Table == "" {
		return k.Service + " " + k.Operation
	}
	return k.Service + " " + k.Operation + " (" + k.Table + ")"
}

// OpCount is what one operation cost.
type OpCount struct {
	Calls    int            // operation calls the service code made
	Attempts int            // HTTP attempts, SDK retries included
	Errors   map[string]int // by error code, e.g. ConditionalCheckFailedException
	// Capacity as DynamoDB returned it (ReturnConsumedCapacity=INDEXES):
	// the table's units and each index's units, summed over calls.
	TableUnits, IndexUnits float64
	ByIndex                map[string]float64
	CapacityReturned       int // calls whose response carried ConsumedCapacity
}

// SDKCounter counts requests through AWS SDK middleware: an Initialize
// step sees each operation call (and asks DynamoDB for its consumed
// capacity), a Finalize step after the retry middleware sees each attempt.
type SDKCounter struct {
	mu  sync.Mutex
	ops map[OpKey]*OpCount
}

// NewSDKCounter starts empty.
func NewSDKCounter() *SDKCounter { return &SDKCounter{ops: map[OpKey]*OpCount{}} }

type countKey struct{}

// APIOptions go into a client's Options.APIOptions.
func (c *SDKCounter) APIOptions(service string) []func(*middleware.Stack) error {
	return []func(*middleware.Stack) error{func(st *middleware.Stack) error {
		err := st.Initialize.Add(middleware.InitializeMiddlewareFunc("BenchCountCalls",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				askForCapacity(in.Parameters)
				key := OpKey{Service: service, Operation: operationName(ctx, in.Parameters), Table: tableOf(in.Parameters)}
				op := c.op(key)
				out, md, err := next.HandleInitialize(context.WithValue(ctx, countKey{}, key), in)
				c.record(op, out.Result, err)
				return out, md, err
			}), middleware.After)
		if err != nil {
			return err
		}
		attempt := middleware.FinalizeMiddlewareFunc("BenchCountAttempts",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if key, ok := ctx.Value(countKey{}).(OpKey); ok {
					c.mu.Lock()
					c.ops[key].Attempts++
					c.mu.Unlock()
				}
				return next.HandleFinalize(ctx, in)
			})
		// After the retry middleware, so every retried attempt passes here.
		if err := st.Finalize.Insert(attempt, "Retry", middleware.After); err != nil {
			return fmt.Errorf("count attempts: no Retry middleware to follow: %w", err)
		}
		return nil
	}}
}

func (c *SDKCounter) op(key OpKey) *OpCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	op := c.ops[key]
	if op == nil {
		op = &OpCount{Errors: map[string]int{}, ByIndex: map[string]float64{}}
		c.ops[key] = op
	}
	op.Calls++
	return op
}

func (c *SDKCounter) record(op *OpCount, result any, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		code := "error"
		var ae smithy.APIError
		if errors.As(err, &ae) {
			code = ae.ErrorCode()
		}
		op.Errors[code]++
		return
	}
	for _, cc := range consumedCapacity(result) {
		op.CapacityReturned++
		table := cc.CapacityUnits
		if cc.Table != nil && cc.Table.CapacityUnits != nil {
			table = cc.Table.CapacityUnits
		}
		if table != nil {
			op.TableUnits += *table
		}
		for name, idx := range cc.GlobalSecondaryIndexes {
			if idx.CapacityUnits != nil {
				op.IndexUnits += *idx.CapacityUnits
				op.ByIndex[name] += *idx.CapacityUnits
			}
		}
	}
}

// Snapshot copies the counts.
func (c *SDKCounter) Snapshot() map[OpKey]OpCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[OpKey]OpCount, len(c.ops))
	for k, v := range c.ops {
		cp := *v
		cp.Errors, cp.ByIndex = clone(v.Errors), clone(v.ByIndex)
		out[k] = cp
	}
	return out
}

// Diff is what happened between two snapshots.
func Diff(before, after map[OpKey]OpCount) map[OpKey]OpCount {
	out := map[OpKey]OpCount{}
	for k, a := range after {
		b := before[k]
		d := OpCount{Calls: a.Calls - b.Calls, Attempts: a.Attempts - b.Attempts, TableUnits: a.TableUnits - b.TableUnits,
			IndexUnits: a.IndexUnits - b.IndexUnits, CapacityReturned: a.CapacityReturned - b.CapacityReturned,
			Errors: map[string]int{}, ByIndex: map[string]float64{}}
		for e, n := range a.Errors {
			if n-b.Errors[e] != 0 {
				d.Errors[e] = n - b.Errors[e]
			}
		}
		for i, u := range a.ByIndex {
			if u-b.ByIndex[i] != 0 {
				d.ByIndex[i] = u - b.ByIndex[i]
			}
		}
		if d.Calls != 0 || d.Attempts != 0 {
			out[k] = d
		}
	}
	return out
}

// SortedKeys orders operations by service, table and name.
func SortedKeys(m map[OpKey]OpCount) []OpKey {
	keys := make([]OpKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b OpKey) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

func clone[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// operationName is the SDK's own name for the operation, falling back to
// the input type (UpdateItemInput → UpdateItem).
func operationName(ctx context.Context, params any) string {
	if name := awsmiddleware.GetOperationName(ctx); name != "" {
		return name
	}
	t := fmt.Sprintf("%T", params)
	t = t[strings.LastIndexByte(t, '.')+1:]
	return strings.TrimSuffix(t, "Input")
}

// askForCapacity makes DynamoDB report consumed capacity per table and
// index. It changes nothing else about the request.
func askForCapacity(params any) {
	const want = types.ReturnConsumedCapacityIndexes
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity = want
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = want
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = want
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = want
	case *dynamodb.BatchGetItemInput:
		p.ReturnConsumedCapacity = want
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity = want
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity = want
	case *dynamodb.ScanInput:
		p.ReturnConsumedCapacity = want
	}
}

func consumedCapacity(result any) []types.ConsumedCapacity {
	one := func(c *types.ConsumedCapacity) []types.ConsumedCapacity {
		if c == nil {
			return nil
		}
		return []types.ConsumedCapacity{*c}
	}
	switch r := result.(type) {
	case *dynamodb.GetItemOutput:
		return one(r.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		return one(r.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(r.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(r.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		return r.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		return r.ConsumedCapacity
	case *dynamodb.QueryOutput:
		return one(r.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		return one(r.ConsumedCapacity)
	}
	return nil
}

func tableOf(params any) string {
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		return deref(p.TableName)
	case *dynamodb.PutItemInput:
		return deref(p.TableName)
	case *dynamodb.UpdateItemInput:
		return deref(p.TableName)
	case *dynamodb.DeleteItemInput:
		return deref(p.TableName)
	case *dynamodb.QueryInput:
		return deref(p.TableName)
	case *dynamodb.ScanInput:
		return deref(p.TableName)
	case *dynamodb.BatchGetItemInput:
		return strings.Join(slices.Sorted(maps.Keys(p.RequestItems)), ",")
	case *dynamodb.BatchWriteItemInput:
		return strings.Join(slices.Sorted(maps.Keys(p.RequestItems)), ",")
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
