package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// OpKey names one operation on one table ("" for other services).
type OpKey struct {
	Service, Operation, Table string
}

func (k OpKey) String() string {
	if k.Table == "" {
		return k.Service + " " + k.Operation
	}
	return k.Service + " " + k.Operation + " (" + k.Table + ")"
}

// OpCount is what one operation cost; Chunks and Empty are SQS's billed
// requests and empty receives.
type OpCount struct {
	Calls, Attempts        int
	Errors                 Counts
	TableUnits, IndexUnits float64
	CapacityReturned       bool
	Took                   time.Duration
	Chunks, Empty          int
}

// SDKCounter counts requests through AWS SDK middleware: an Initialize
// step sees each call (and asks DynamoDB for its consumed capacity), a
// Finalize step after the retry middleware each attempt.
type SDKCounter struct {
	mu  sync.Mutex
	ops map[OpKey]*OpCount
}

// NewSDKCounter starts empty; APIOptions go into a client's options.
func NewSDKCounter() *SDKCounter { return &SDKCounter{ops: map[OpKey]*OpCount{}} }

type countKey struct{}

func (c *SDKCounter) APIOptions(service string) []func(*middleware.Stack) error {
	calls := middleware.InitializeMiddlewareFunc("BenchCountCalls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			askForCapacity(in.Parameters)
			op := c.call(OpKey{Service: service, Operation: operationName(ctx, in.Parameters), Table: tableOf(in.Parameters)})
			start := time.Now()
			out, md, err := next.HandleInitialize(context.WithValue(ctx, countKey{}, op), in)
			c.record(op, out.Result, time.Since(start), err)
			if err == nil && strings.HasPrefix(service, "SQS") {
				c.addSQS(op, in.Parameters, out.Result)
			}
			return out, md, err
		})
	attempts := middleware.FinalizeMiddlewareFunc("BenchCountAttempts",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if op, ok := ctx.Value(countKey{}).(*OpCount); ok {
				c.mu.Lock()
				op.Attempts++
				c.mu.Unlock()
			}
			return next.HandleFinalize(ctx, in)
		})
	return []func(*middleware.Stack) error{func(st *middleware.Stack) error {
		if err := st.Initialize.Add(calls, middleware.After); err != nil {
			return err
		}
		// After the retry middleware, so every retried attempt passes here.
		if err := st.Finalize.Insert(attempts, "Retry", middleware.After); err != nil {
			return fmt.Errorf("count attempts: no Retry middleware to follow: %w", err)
		}
		return nil
	}}
}

func (c *SDKCounter) call(key OpKey) *OpCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	op := c.ops[key]
	if op == nil {
		op = &OpCount{Errors: Counts{}}
		c.ops[key] = op
	}
	op.Calls++
	return op
}

func (c *SDKCounter) record(op *OpCount, result any, took time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	op.Took += took
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
		op.CapacityReturned = true
		table := cc.CapacityUnits
		if cc.Table != nil && cc.Table.CapacityUnits != nil {
			table = cc.Table.CapacityUnits
		}
		if table != nil {
			op.TableUnits += *table
		}
		for _, idx := range cc.GlobalSecondaryIndexes {
			if idx.CapacityUnits != nil {
				op.IndexUnits += *idx.CapacityUnits
			}
		}
	}
}

// Take returns the counts since the previous Take.
func (c *SDKCounter) Take() map[OpKey]OpCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[OpKey]OpCount, len(c.ops))
	for k, v := range c.ops {
		cp := *v
		cp.Errors = maps.Clone(v.Errors) // a call still in flight records into v later
		out[k] = cp
	}
	c.ops = map[OpKey]*OpCount{}
	return out
}

func operationName(ctx context.Context, params any) string {
	if name := awsmiddleware.GetOperationName(ctx); name != "" {
		return name
	}
	return strings.TrimSuffix(reflect.TypeOf(params).Elem().Name(), "Input")
}

// DynamoDB's inputs and outputs share field names, not interfaces
// (TableName or RequestItems, ReturnConsumedCapacity, ConsumedCapacity):
// they are read by reflection. Other services' inputs have none of them.

func askForCapacity(params any) {
	want := reflect.ValueOf(types.ReturnConsumedCapacityIndexes)
	if f := field(params, "ReturnConsumedCapacity"); f.IsValid() && f.CanSet() && f.Type() == want.Type() {
		f.Set(want)
	}
}

func consumedCapacity(result any) []types.ConsumedCapacity {
	f := field(result, "ConsumedCapacity")
	if !f.IsValid() {
		return nil
	}
	switch c := f.Interface().(type) {
	case *types.ConsumedCapacity:
		if c != nil {
			return []types.ConsumedCapacity{*c}
		}
	case []types.ConsumedCapacity: // the batch operations
		return c
	}
	return nil
}

func tableOf(params any) string {
	if f := field(params, "TableName"); f.IsValid() {
		name, _ := f.Interface().(*string)
		return aws.ToString(name)
	}
	if items := field(params, "RequestItems"); items.Kind() == reflect.Map { // the batch operations
		var tables []string
		for _, k := range items.MapKeys() {
			tables = append(tables, k.String())
		}
		slices.Sort(tables)
		return strings.Join(tables, ",")
	}
	return ""
}

func field(v any, name string) reflect.Value {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return rv.Elem().FieldByName(name)
}

// dynamoUse is DynamoDB's part of some calls, per call.
type dynamoUse struct {
	Requests, Table, Index, Reads, Writes, IndexWrites float64
	Took                                               time.Duration
}

func dynamoPerCall(ops map[OpKey]OpCount, n int, keep func(OpKey) bool) dynamoUse {
	var u dynamoUse
	for k, op := range ops {
		if k.Service != "DynamoDB" || !keep(k) {
			continue
		}
		u.Requests, u.Table, u.Index, u.Took = u.Requests+float64(op.Calls), u.Table+op.TableUnits, u.Index+op.IndexUnits, u.Took+op.Took
		switch k.Operation {
		case "UpdateItem", "PutItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem":
			u.Writes += op.TableUnits + op.IndexUnits
			u.IndexWrites += op.IndexUnits
		default:
			u.Reads += op.TableUnits + op.IndexUnits
		}
	}
	per := float64(max(n, 1))
	return dynamoUse{u.Requests / per, u.Table / per, u.Index / per, u.Reads / per, u.Writes / per, u.IndexWrites / per, u.Took / time.Duration(max(n, 1))}
}

// Phase is what a run of allocations cost in AWS requests.
type Phase struct {
	N       int
	Elapsed time.Duration
	Took    Summary // in-process handler time per invocation
	Ops     map[OpKey]OpCount
}

func (p Phase) on(table, op string) dynamoUse {
	return dynamoPerCall(p.Ops, p.N, func(k OpKey) bool { return k.Table == table && (op == "" || k.Operation == op) })
}

// RequestRow is one operation of one phase, per allocation.
type RequestRow struct {
	Phase                                      string
	Op                                         OpKey
	Requests, Attempts, TableUnits, IndexUnits float64
	Chunks, Empty                              float64
	CapacityReturned                           bool
	Errors                                     Counts
	Took                                       time.Duration
}

func requestRows(label string, p Phase) []RequestRow {
	keys := slices.SortedFunc(maps.Keys(p.Ops), func(a, b OpKey) int { return cmp.Compare(a.String(), b.String()) })
	n := float64(max(p.N, 1))
	rows := make([]RequestRow, 0, len(keys))
	for _, k := range keys {
		op := p.Ops[k]
		rows = append(rows, RequestRow{Phase: label, Op: k, Requests: float64(op.Calls) / n, Attempts: float64(op.Attempts) / n,
			TableUnits: op.TableUnits / n, IndexUnits: op.IndexUnits / n,
			Chunks: float64(op.Chunks) / n, Empty: float64(op.Empty) / n, CapacityReturned: op.CapacityReturned, Errors: op.Errors,
			Took: op.Took / time.Duration(max(op.Calls, 1))})
	}
	return rows
}

// sqsChunk: SQS bills every 64 KB chunk of a request's payload as a request.
const sqsChunk = 64 * 1024

// sqsBilled is what a successful SQS call is billed (an empty long poll is
// billed all the same), and whether a receive brought nothing.
func sqsBilled(params, result any) (chunks int, empty bool) {
	size := 0
	switch in := params.(type) {
	case *sqs.SendMessageInput:
		size = len(aws.ToString(in.MessageBody))
	case *sqs.SendMessageBatchInput:
		for _, e := range in.Entries {
			size += len(aws.ToString(e.MessageBody))
		}
	}
	if out, ok := result.(*sqs.ReceiveMessageOutput); ok && out != nil {
		empty = len(out.Messages) == 0
		for _, m := range out.Messages {
			size += len(aws.ToString(m.Body))
		}
	}
	return max(1, (size+sqsChunk-1)/sqsChunk), empty
}

func (c *SDKCounter) addSQS(op *OpCount, params, result any) {
	chunks, empty := sqsBilled(params, result)
	c.mu.Lock()
	defer c.mu.Unlock()
	op.Chunks += chunks
	if empty {
		op.Empty++
	}
}
