package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The counter reads and sets DynamoDB fields by name; every operation the
// handlers use must be seen, and other services' calls left alone.
func TestSDKCounterReadsEveryOperation(t *testing.T) {
	units := func(u float64) *types.ConsumedCapacity {
		return &types.ConsumedCapacity{Table: &types.Capacity{CapacityUnits: aws.Float64(u)},
			GlobalSecondaryIndexes: map[string]types.Capacity{"HealthDeadlineIndex": {CapacityUnits: aws.Float64(1)}}}
	}
	batch := map[string]types.KeysAndAttributes{"b-table": {}, "a-table": {}}
	for _, c := range []struct {
		name        string
		in, out     any
		table, op   string
		tableUnits  float64
		indexUnits  float64
		hasCapacity bool
	}{
		{name: "update", in: &dynamodb.UpdateItemInput{TableName: aws.String("gi")}, out: &dynamodb.UpdateItemOutput{ConsumedCapacity: units(2)},
			table: "gi", op: "UpdateItem", tableUnits: 2, indexUnits: 1, hasCapacity: true},
		{name: "get", in: &dynamodb.GetItemInput{TableName: aws.String("gi")}, out: &dynamodb.GetItemOutput{},
			table: "gi", op: "GetItem"},
		{name: "batch get", in: &dynamodb.BatchGetItemInput{RequestItems: batch},
			out:   &dynamodb.BatchGetItemOutput{ConsumedCapacity: []types.ConsumedCapacity{{CapacityUnits: aws.Float64(1)}, {CapacityUnits: aws.Float64(1)}}},
			table: "a-table,b-table", op: "BatchGetItem", tableUnits: 2, hasCapacity: true},
		// A transaction names its tables per item, not at the top: its
		// units come per table and are summed under no table.
		{name: "transaction", in: &dynamodb.TransactWriteItemsInput{}, out: &dynamodb.TransactWriteItemsOutput{ConsumedCapacity: []types.ConsumedCapacity{*units(2), *units(2)}},
			op: "TransactWriteItems", tableUnits: 4, indexUnits: 2, hasCapacity: true},
		{name: "secrets", in: &secretsmanager.GetSecretValueInput{SecretId: aws.String("s")}, out: &secretsmanager.GetSecretValueOutput{},
			op: "GetSecretValue"},
	} {
		askForCapacity(c.in)
		if f := field(c.in, "ReturnConsumedCapacity"); f.IsValid() && f.Interface() != types.ReturnConsumedCapacityIndexes {
			t.Errorf("%s: ReturnConsumedCapacity = %v", c.name, f.Interface())
		}
		if got := tableOf(c.in); got != c.table {
			t.Errorf("%s: table %q, want %q", c.name, got, c.table)
		}
		if got := operationName(t.Context(), c.in); got != c.op {
			t.Errorf("%s: operation %q, want %q", c.name, got, c.op)
		}
		counter := NewSDKCounter()
		counter.record(counter.call(OpKey{Operation: c.op, Table: c.table}), c.out, 0, nil)
		got := counter.Take()[OpKey{Operation: c.op, Table: c.table}]
		if got.Calls != 1 || got.TableUnits != c.tableUnits || got.IndexUnits != c.indexUnits || got.CapacityReturned != c.hasCapacity {
			t.Errorf("%s: counted %+v", c.name, got)
		}
		if len(counter.Take()) != 0 {
			t.Errorf("%s: Take did not start over", c.name)
		}
	}
}

// SQS bills a request per started 64 KB of payload, and an empty receive
// like any other.
func TestSQSBilled(t *testing.T) {
	body := func(n int) *string { return aws.String(strings.Repeat("x", n)) }
	for _, c := range []struct {
		name     string
		in, out  any
		chunks   int
		wasEmpty bool
	}{
		{"small send", &sqs.SendMessageInput{MessageBody: body(900)}, &sqs.SendMessageOutput{}, 1, false},
		{"send of 64 KB and a byte", &sqs.SendMessageInput{MessageBody: body(sqsChunk + 1)}, &sqs.SendMessageOutput{}, 2, false},
		{"empty receive", &sqs.ReceiveMessageInput{}, &sqs.ReceiveMessageOutput{}, 1, true},
		{"receive of two 40 KB messages", &sqs.ReceiveMessageInput{},
			&sqs.ReceiveMessageOutput{Messages: []sqstypes.Message{{Body: body(40 << 10)}, {Body: body(40 << 10)}}}, 2, false},
		{"delete", &sqs.DeleteMessageBatchInput{}, &sqs.DeleteMessageBatchOutput{}, 1, false},
	} {
		if chunks, empty := sqsBilled(c.in, c.out); chunks != c.chunks || empty != c.wasEmpty {
			t.Errorf("%s: %d chunks, empty %v; want %d, %v", c.name, chunks, empty, c.chunks, c.wasEmpty)
		}
	}
}

// What Take returned stays as it was while calls still in flight finish.
func TestTakeIsASnapshot(t *testing.T) {
	c := NewSDKCounter()
	key := OpKey{Service: "SQS", Operation: "ReceiveMessage"}
	op := c.call(key)
	c.addSQS(op, &sqs.ReceiveMessageInput{}, &sqs.ReceiveMessageOutput{})
	inFlight := c.call(key)
	got := c.Take()[key]
	c.record(inFlight, nil, 0, errors.New("context canceled"))
	if got.Calls != 2 || got.Chunks != 1 || got.Empty != 1 || len(got.Errors) != 0 {
		t.Errorf("taken %+v", got)
	}
}
