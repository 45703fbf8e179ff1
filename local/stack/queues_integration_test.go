//go:build integration

package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/sqssource"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// The template's queues exist in moto as deployed (PlacementQueue's
// visibility, retention and redrive to PlacementDeadLetterQueue), and the
// mapping the stack derives for PlacementFunction's SQS event delivers
// their messages as Lambda would, here to a Go function in its place.
func TestTemplateQueuesAndTheirEventSourceOnMoto(t *testing.T) {
	c, ctx := startDefaultComponents(t)
	q := c.SQS()
	out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(c.Queues["PlacementQueue"]),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	redrive := fmt.Sprintf(`{"deadLetterTargetArn": %q, "maxReceiveCount": 5}`, c.QueueARNs["PlacementDeadLetterQueue"])
	for name, want := range map[string]string{"VisibilityTimeout": "180", "MessageRetentionPeriod": "3600", "RedrivePolicy": redrive} {
		if got := out.Attributes[name]; !sameJSON(got, want) {
			t.Errorf("PlacementQueue %s = %s, want %s", name, got, want)
		}
	}

	sources, err := c.Template.SQSEventSources(nil)
	if err != nil || len(sources) != 1 {
		t.Fatalf("SQS event sources %+v, %v", sources, err)
	}
	mcfg, err := c.QueueSourceConfig(sources[0])
	if err != nil {
		t.Fatal(err)
	}
	fn := &placementStandIn{}
	mcfg.WaitTime = time.Second
	m, err := sqssource.Start(mcfg, q, fn)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	for _, body := range []string{`{"gameInstanceId":"gi-ok"}`, `{"gameInstanceId":"gi-later"}`} {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.Queues["PlacementQueue"]), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	// gi-later is reported failed: it stays in flight for the 180 s
	// visibility timeout; gi-ok is deleted.
	testkit.WaitFor(t, 15*time.Second, "gi-ok deleted and gi-later in flight", func() bool {
		n := queueCounts(t, q, c.Queues["PlacementQueue"])
		return len(fn.seen()) == 2 && n == [2]string{"0", "1"}
	})
	for _, rec := range fn.seen() {
		if rec.EventSourceARN != c.QueueARNs["PlacementQueue"] || rec.EventSource != "aws:sqs" || rec.Attributes["ApproximateReceiveCount"] != "1" {
			t.Errorf("record %+v", rec)
		}
	}
}

// placementStandIn answers like the worker would: gi-later is not placed
// yet and reported as a batch item failure.
type placementStandIn struct {
	mu   sync.Mutex
	recs []events.SQSMessage
}

func (p *placementStandIn) Invoke(_ context.Context, event []byte) ([]byte, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, err
	}
	var res events.SQSEventResponse
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range ev.Records {
		p.recs = append(p.recs, r)
		if r.Body == `{"gameInstanceId":"gi-later"}` {
			res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return json.Marshal(res)
}

func (p *placementStandIn) seen() []events.SQSMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]events.SQSMessage(nil), p.recs...)
}

// queueCounts are a queue's visible and in-flight messages.
func queueCounts(t *testing.T, q *sqs.Client, url string) [2]string {
	t.Helper()
	out, err := q.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	return [2]string{out.Attributes["ApproximateNumberOfMessages"], out.Attributes["ApproximateNumberOfMessagesNotVisible"]}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
