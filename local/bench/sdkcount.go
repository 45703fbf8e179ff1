package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
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
	Calls    int    // operation calls the service code made
	Attempts int    // HTTP attempts, SDK retries included
	Errors   Counts // by error code, e.g. ConditionalCheckFailedException
	// Capacity as DynamoDB returned it (ReturnConsumedCapacity=INDEXES),
	// summed over calls: the table's units and its indexes' units.
	TableUnits, IndexUnits float64
	CapacityReturned       bool // some response carried ConsumedCapacity
	// Took is the calls' time, summed: from the call to its answer, the
	// SDK's retries and the round trips to the service included.
	Took time.Duration
	// SQS only (services named "SQS…"): the requests billed, one per 64 KB
	// chunk of payload, and the ReceiveMessage calls that brought nothing.
	Chunks, Empty int
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
				op := c.call(OpKey{Service: service, Operation: operationName(ctx, in.Parameters), Table: tableOf(in.Parameters)})
				start := time.Now()
				out, md, err := next.HandleInitialize(context.WithValue(ctx, countKey{}, op), in)
				c.record(op, out.Result, time.Since(start), err)
				if err == nil && strings.HasPrefix(service, "SQS") {
					c.addSQS(op, in.Parameters, out.Result)
				}
				return out, md, err
			}), middleware.After)
		if err != nil {
			return err
		}
		attempt := middleware.FinalizeMiddlewareFunc("BenchCountAttempts",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if op, ok := ctx.Value(countKey{}).(*OpCount); ok {
					c.mu.Lock()
					op.Attempts++
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

// Take returns the counts since the previous Take (or NewSDKCounter) and
// starts over.
func (c *SDKCounter) Take() map[OpKey]OpCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[OpKey]OpCount, len(c.ops))
	for k, v := range c.ops {
		// Errors is cloned: a call still in flight records into v later.
		cp := *v
		cp.Errors = maps.Clone(v.Errors)
		out[k] = cp
	}
	c.ops = map[OpKey]*OpCount{}
	return out
}

// operationName is the SDK's own name for the operation, falling back to
// the input type (UpdateItemInput → UpdateItem).
func operationName(ctx context.Context, params any) string {
	if name := awsmiddleware.GetOperationName(ctx); name != "" {
		return name
	}
	return strings.TrimSuffix(reflect.TypeOf(params).Elem().Name(), "Input")
}

// The DynamoDB operations' inputs and outputs share field names, not
// interfaces: TableName or RequestItems, ReturnConsumedCapacity and
// ConsumedCapacity. Other services' inputs have none of them.

// askForCapacity makes DynamoDB report consumed capacity per table and
// index. It changes nothing else about the request.
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
		if name, ok := f.Interface().(*string); ok && name != nil {
			return *name
		}
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

// field is the named field of the struct v points to, or the zero Value.
func field(v any, name string) reflect.Value {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return rv.Elem().FieldByName(name)
}
