//go:build integration

package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// local is one DynamoDB Local and one moto for every test here.
type local struct {
	ddb     *dynamodb.Client
	streams *dynamodbstreams.Client
	sqs     *sqs.Client
}

func startLocal(t *testing.T) local {
	t.Helper()
	ctx := context.Background()
	ddb, err := harness.StartDynamoDBLocal(ctx)
	if err != nil {
		t.Fatalf("DynamoDB Local: %v", err)
	}
	t.Cleanup(func() { _ = ddb.Stop() })
	moto, err := harness.StartMoto(ctx)
	if err != nil {
		t.Fatalf("moto: %v", err)
	}
	t.Cleanup(func() { _ = moto.Stop() })
	cfg := harness.AWSConfig()
	return local{
		ddb:     harness.NewDynamoDB(cfg, ddb.Endpoint),
		streams: dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(ddb.Endpoint) }),
		sqs:     sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto.Endpoint) }),
	}
}

// table creates a table keyed by id with a NEW_AND_OLD_IMAGES stream and
// returns the stream's ARN.
func (l local) table(t *testing.T, name string) string {
	t.Helper()
	out, err := l.ddb.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: ddbtypes.KeyTypeHash}},
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.TableDescription.LatestStreamArn)
}

func (l local) put(t *testing.T, table, id, state string) {
	t.Helper()
	_, err := l.ddb.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]ddbtypes.AttributeValue{
		"id": &ddbtypes.AttributeValueMemberS{Value: id}, "state": &ddbtypes.AttributeValueMemberS{Value: state},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func (l local) queue(t *testing.T, name string) string {
	t.Helper()
	out, err := l.sqs.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

func (l local) receive(t *testing.T, url string, within time.Duration) []string {
	t.Helper()
	var bodies []string
	deadline := time.Now().Add(within)
	for len(bodies) == 0 && time.Now().Before(deadline) {
		out, err := l.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return bodies
}

// fn is a Go-func function recording each invocation's record ids
// (NewImage.id) and sequence numbers.
type fn struct {
	mu      sync.Mutex
	calls   [][]string
	seqs    map[string]string // id -> sequence number
	respond func(call int, ids []string, seqOf func(string) string) ([]byte, error)
}

func (f *fn) Invoke(_ context.Context, event []byte) ([]byte, error) {
	var ev Event
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, err
	}
	f.mu.Lock()
	var ids []string
	if f.seqs == nil {
		f.seqs = map[string]string{}
	}
	for _, r := range ev.Records {
		id := r.DynamoDB.Keys["id"].(map[string]any)["S"].(string)
		ids = append(ids, id+":"+r.EventName)
		f.seqs[id] = r.DynamoDB.SequenceNumber
	}
	call := len(f.calls)
	f.calls = append(f.calls, ids)
	seqOf := func(id string) string { return f.seqs[id] }
	f.mu.Unlock()
	return f.respond(call, ids, seqOf)
}

func (f *fn) snapshot() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.calls...)
}

func flatten(calls [][]string) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c...)
	}
	return out
}

func fast(cfg Config, t *testing.T) Config {
	cfg.PollInterval, cfg.RetryBackoff, cfg.DescribeInterval = 50*time.Millisecond, 10*time.Millisecond, 200*time.Millisecond
	cfg.Function, cfg.Log = "TestFunction", testLogger(t)
	return cfg
}

func TestMappingOnDynamoDBLocal(t *testing.T) {
	l := startLocal(t)

	t.Run("in order, filtered records never invoke", func(t *testing.T) {
		arn := l.table(t, "ordered")
		filter, err := CompileFilter([]string{
			`{"eventName":["INSERT"]}`,
			`{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"state":{"S":[{"anything-but":["Linked"]}]}}}}`,
			`{"eventName":["MODIFY"],"dynamodb":{"OldImage":{"state":{"S":[{"anything-but":["Linked"]}]}}}}`,
		})
		if err != nil {
			t.Fatal(err)
		}
		f := &fn{respond: func(int, []string, func(string) string) ([]byte, error) { return nil, nil }}
		m, err := Start(fast(Config{StreamARN: arn, BatchSize: 3, Filter: filter, ReportBatchItemFailures: true, MaximumRetryAttempts: 1}, t), l.streams, f)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Stop()
		l.put(t, "ordered", "a", "Allocating")
		l.put(t, "ordered", "a", "Allocated")
		l.put(t, "ordered", "a", "Linked")
		l.put(t, "ordered", "a", "Linked") // a heartbeat: filtered
		l.put(t, "ordered", "b", "Allocating")
		l.put(t, "ordered", "a", "Linked") // filtered
		l.put(t, "ordered", "a", "Ended")
		want := []string{"a:INSERT", "a:MODIFY", "a:MODIFY", "b:INSERT", "a:MODIFY"}
		testkit.WaitFor(t, 10*time.Second, "five records delivered", func() bool { return len(flatten(f.snapshot())) >= len(want) })
		time.Sleep(300 * time.Millisecond) // nothing more arrives
		if got := flatten(f.snapshot()); !reflect.DeepEqual(got, want) {
			t.Errorf("delivered %v, want %v", got, want)
		}
		for _, c := range f.snapshot() {
			if len(c) > 3 {
				t.Errorf("a batch of %d records, BatchSize is 3", len(c))
			}
		}
	})

	t.Run("batch item failure retries from that record only", func(t *testing.T) {
		arn := l.table(t, "partial")
		f := &fn{respond: func(call int, ids []string, seqOf func(string) string) ([]byte, error) {
			if call == 0 {
				return []byte(fmt.Sprintf(`{"batchItemFailures":[{"itemIdentifier":%q}]}`, seqOf("c"))), nil
			}
			return []byte(`{"batchItemFailures":[]}`), nil
		}}
		for _, id := range []string{"a", "b", "c", "d"} {
			l.put(t, "partial", id, "Allocating")
		}
		m, err := Start(fast(Config{StreamARN: arn, BatchSize: 10, BatchingWindow: 300 * time.Millisecond, ReportBatchItemFailures: true, MaximumRetryAttempts: 2}, t), l.streams, f)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Stop()
		testkit.WaitFor(t, 10*time.Second, "the retry", func() bool { return len(f.snapshot()) >= 2 })
		time.Sleep(300 * time.Millisecond)
		want := [][]string{{"a:INSERT", "b:INSERT", "c:INSERT", "d:INSERT"}, {"c:INSERT", "d:INSERT"}}
		if got := f.snapshot(); !reflect.DeepEqual(got, want) {
			t.Errorf("invocations %v, want %v", got, want)
		}
	})

	t.Run("bisect isolates a poison record, which goes to the destination", func(t *testing.T) {
		arn := l.table(t, "poison")
		dlq := l.queue(t, "poison-dlq")
		var mu sync.Mutex
		delivered := []string{}
		f := &fn{respond: func(_ int, ids []string, _ func(string) string) ([]byte, error) {
			for _, id := range ids {
				if id == "d:INSERT" {
					return nil, errors.New("poison")
				}
			}
			mu.Lock()
			delivered = append(delivered, ids...)
			mu.Unlock()
			return nil, nil
		}}
		for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
			l.put(t, "poison", id, "Allocating")
		}
		m, err := Start(fast(Config{StreamARN: arn, BatchSize: 10, BatchingWindow: 300 * time.Millisecond, BisectBatchOnFunctionError: true,
			ReportBatchItemFailures: true, MaximumRetryAttempts: 2, OnFailure: SQSDestination{Client: l.sqs, QueueURL: dlq}}, t), l.streams, f)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Stop()
		bodies := l.receive(t, dlq, 10*time.Second)
		if len(bodies) != 1 {
			t.Fatalf("destination got %d messages: %v", len(bodies), bodies)
		}
		var rec FailureRecord
		if err := json.Unmarshal([]byte(bodies[0]), &rec); err != nil {
			t.Fatal(err)
		}
		poisonSeq := f.seqs["d"]
		info := rec.DDBStreamBatchInfo
		if rec.RequestContext.Condition != ConditionRetryAttemptsExhausted || rec.Version != "1.0" || rec.ResponseContext.FunctionError != "Unhandled" ||
			info.BatchSize != 1 || info.StartSequenceNumber != poisonSeq || info.EndSequenceNumber != poisonSeq || info.StreamArn != arn || info.ShardID == "" ||
			info.ApproximateArrivalOfFirstRecord == "" {
			t.Errorf("on-failure record %s (poison is %s)", bodies[0], poisonSeq)
		}
		testkit.WaitFor(t, 5*time.Second, "e and f delivered", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(delivered) >= 5
		})
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"a:INSERT", "b:INSERT", "c:INSERT", "e:INSERT", "f:INSERT"}; !reflect.DeepEqual(delivered, want) {
			t.Errorf("delivered %v, want %v (each once, in order)", delivered, want)
		}
		// 1 whole batch, 2 halves, 2 quarters of the second half, then
		// d alone twice more (MaximumRetryAttempts 2), and e,f.
		if calls := f.snapshot(); len(calls) > 8 {
			t.Errorf("%d invocations: %v", len(calls), calls)
		}
	})
}
