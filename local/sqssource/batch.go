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
// BatchSize+1 receives make a batch. Each asks for every system and
// message attribute (the event carries them) and long polls for whole
// seconds; the queue's own visibility timeout applies, as it does for
// Lambda's pollers.
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
		out, err := m.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(m.cfg.QueueURL),
			MaxNumberOfMessages:         int32(min(receiveMax, m.cfg.BatchSize-len(batch))),
			WaitTimeSeconds:             int32((wait + time.Second - 1) / time.Second),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			// Messages already received are in flight: deliver them
			// rather than leave them to the visibility timeout.
			if len(batch) > 0 && ctx.Err() == nil {
				return batch, nil
			}
			return nil, err
		}
		if len(batch) == 0 {
			if len(out.Messages) == 0 {
				return nil, nil
			}
			windowEnds = time.Now().Add(m.cfg.BatchingWindow)
		}
		batch = append(batch, out.Messages...)
	}
	return batch, nil
}
