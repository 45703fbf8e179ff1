//go:build integration

package tests

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/app/placementapp"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// sqsAt is an SQS client of endpoint (a dead port, to play SQS down).
func sqsAt(endpoint string) *sqs.Client {
	return sqs.NewFromConfig(harness.AWSConfig(), func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.RetryMaxAttempts = 1
	})
}

// newPlacementQueue creates a placement queue in moto; its URL.
func newPlacementQueue(t *testing.T) string {
	t.Helper()
	out, err := motoSQS().CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(unique("placements"))})
	if err != nil {
		t.Fatalf("moto SQS: %v", err)
	}
	return aws.ToString(out.QueueUrl)
}

// work plays PlacementFunction in-process for up to d: it takes the
// placement queue's due messages as Lambda's event source mapping does
// (a batch, the handler, then delete all but the batch item failures)
// until done() holds. It returns how many messages it handed over.
func (e *env) work(t *testing.T, d time.Duration, done func() bool) int {
	t.Helper()
	q, handler := motoSQS(), placementapp.Handler(e.svc, logging.New(io.Discard, slog.LevelDebug))
	handed := 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && !done(); {
		out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(e.placementQueue),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		ev := events.SQSEvent{}
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes})
		}
		if len(ev.Records) == 0 {
			continue
		}
		handed += len(ev.Records)
		res, _ := handler(context.Background(), ev)
		failed := map[string]bool{}
		for _, f := range res.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, m := range ev.Records {
			if !failed[m.MessageId] {
				_, _ = q.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(e.placementQueue), ReceiptHandle: aws.String(m.ReceiptHandle)})
			}
		}
	}
	return handed
}

// pending counts the placement queue's messages, delayed ones included.
func (e *env) pending(t *testing.T) int {
	t.Helper()
	out, err := motoSQS().GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(e.placementQueue),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		var k int
		for _, c := range v {
			k = k*10 + int(c-'0')
		}
		n += k
	}
	return n
}

// stateOf is the stored record's state, "" when there is none.
func (e *env) stateOf(t *testing.T, id string) gameinstance.Record {
	t.Helper()
	rec, err := e.store.Get(context.Background(), id)
	if err != nil {
		return gameinstance.Record{}
	}
	return rec
}
