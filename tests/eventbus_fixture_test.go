//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
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
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("all"), EventBusName: aws.String(bus),
		EventPattern: aws.String(`{"source":["gamefabric.allocation"]}`)}); err != nil {
		t.Fatal(err)
	}
	arn := fmt.Sprintf("arn:aws:sqs:%s:123456789012:%s", harness.Region, queue)
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("all"), EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String(arn)}}}); err != nil {
		t.Fatal(err)
	}
	return bus, aws.ToString(out.QueueUrl)
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
