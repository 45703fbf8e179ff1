//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
)

func motoEventBridge() *eventbridge.Client {
	return eventbridge.NewFromConfig(harness.AWSConfig(), func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(stack.smEndpoint) })
}

func motoSQS() *sqs.Client {
	return sqs.NewFromConfig(harness.AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(stack.smEndpoint) })
}

// newEventBus creates a bus in moto and a rule delivering every event of
// the service to a new SQS queue; it returns the bus name and queue URL.
func newEventBus(t *testing.T) (bus, queueURL string) {
	t.Helper()
	ctx := context.Background()
	bus, queue := unique("events"), unique("events-q")
	eb, q := motoEventBridge(), motoSQS()
	if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatal(err)
	}
	urls, err := localstack.RouteToQueues(ctx, eb, q, bus, "all", queue)
	if err != nil {
		t.Fatal(err)
	}
	return bus, urls[0]
}

// receiveEvents takes what the queue holds now, as "<detail-type>
// <idempotencyKey>".
func receiveEvents(t *testing.T, queueURL string) []string {
	t.Helper()
	q := motoSQS()
	out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range out.Messages {
		var ev struct {
			DetailType string `json:"detail-type"`
			Detail     struct {
				IdempotencyKey string `json:"idempotencyKey"`
			} `json:"detail"`
		}
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil {
			t.Fatalf("event %s: %v", aws.ToString(m.Body), err)
		}
		got = append(got, ev.DetailType+" "+ev.Detail.IdempotencyKey)
		_, _ = q.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: m.ReceiptHandle})
	}
	return got
}
