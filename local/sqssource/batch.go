package sqssource

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// receiveMax is SQS's limit of messages per ReceiveMessage.
const receiveMax = 10

// receiveBatch gathers up to BatchSize messages: the first receive long
// polls; once one message is in hand, more are gathered only within the
// batching window (none without one), as Lambda does. Every receive that
// returns before the window ends brings at least one message, so at most
// BatchSize+1 receives make a batch.
func (m *Mapping) receiveBatch(ctx context.Context) ([]types.Message, error) {
	var batch []types.Message
	var windowEnds time.Time
	for calls := 0; calls <= m.cfg.BatchSize && len(batch) < m.cfg.BatchSize; calls++ {
		wait := m.cfg.WaitTime
		if len(batch) > 0 {
			left := time.Until(windowEnds)
			if left <= 0 {
				break
			}
			wait = min(wait, left)
		}
		msgs, err := m.receive(ctx, min(receiveMax, m.cfg.BatchSize-len(batch)), wait)
		if err != nil {
			// Messages already received are in flight: deliver them
			// rather than leave them to the visibility timeout.
			if len(batch) > 0 && ctx.Err() == nil {
				return batch, nil
			}
			return nil, err
		}
		if len(batch) == 0 {
			if len(msgs) == 0 {
				return nil, nil
			}
			windowEnds = time.Now().Add(m.cfg.BatchingWindow)
		}
		batch = append(batch, msgs...)
	}
	return batch, nil
}

// receive asks for up to n messages with every system and message
// attribute (the event carries them), long polling for wait rounded up to
// whole seconds. The queue's own visibility timeout applies, as it does
// for Lambda's pollers.
func (m *Mapping) receive(ctx context.Context, n int, wait time.Duration) ([]types.Message, error) {
	out, err := m.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(m.cfg.QueueURL),
		MaxNumberOfMessages:         int32(n),
		WaitTimeSeconds:             int32((wait + time.Second - 1) / time.Second),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, err
	}
	return out.Messages, nil
}
