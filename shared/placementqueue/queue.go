// Package placementqueue is the placement queue on SQS: the adapter of
// allocation.Queue. A message is one queued placement's next attempt,
// delayed by SQS until it is due.
package placementqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

// API is the part of the SQS client the queue uses.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Queue sends placement messages to one SQS queue.
type Queue struct {
	API API
	URL string
}

var _ allocation.Queue = Queue{}

// maxDelay is SQS's longest message delay.
const maxDelay = 15 * time.Minute

// Enqueue sends m with SQS's DelaySeconds rounded up to whole seconds.
// The body holds the request's tokens: the queue is encrypted at rest
// (SqsManagedSseEnabled) and errors never quote the body.
func (q Queue) Enqueue(ctx context.Context, m allocation.QueuedPlacement, delay time.Duration) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode the placement message: %w", err)
	}
	seconds := int32((min(max(delay, 0), maxDelay) + time.Second - 1) / time.Second)
	if _, err := q.API.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(string(body)), DelaySeconds: seconds}); err != nil {
		return fmt.Errorf("send the placement message of %s: %w", m.GameInstanceID, err)
	}
	return nil
}

// Decode reads a message body; it is bounded by SQS (256 KB).
func Decode(body string) (allocation.QueuedPlacement, error) {
	var m allocation.QueuedPlacement
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return allocation.QueuedPlacement{}, fmt.Errorf("placement message: %w", err)
	}
	if m.GameInstanceID == "" || m.Ticket == "" {
		return allocation.QueuedPlacement{}, fmt.Errorf("placement message: gameInstanceId and ticket are required")
	}
	return m, nil
}
