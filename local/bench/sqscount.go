package bench

import (
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// sqsChunk is what SQS bills as one request: every 64 KB chunk of a
// request's payload counts as a request of its own.
const sqsChunk = 64 * 1024

// sqsBilled is what one successful SQS call is billed: its 64 KB chunks
// (at least one) and, for a ReceiveMessage, whether it brought nothing
// (an empty long poll is billed all the same). The payload is the bodies
// sent or received; attributes the service reads (the bench sends none)
// are far below a chunk.
func sqsBilled(params, result any) (chunks int, empty bool) {
	size := 0
	switch in := params.(type) {
	case *sqs.SendMessageInput:
		if in.MessageBody != nil {
			size = len(*in.MessageBody)
		}
	case *sqs.SendMessageBatchInput:
		for _, e := range in.Entries {
			if e.MessageBody != nil {
				size += len(*e.MessageBody)
			}
		}
	}
	if out, ok := result.(*sqs.ReceiveMessageOutput); ok && out != nil {
		empty = len(out.Messages) == 0
		for _, m := range out.Messages {
			if m.Body != nil {
				size += len(*m.Body)
			}
		}
	}
	return max(1, (size+sqsChunk-1)/sqsChunk), empty
}

// addSQS records what a successful SQS call is billed.
func (c *SDKCounter) addSQS(op *OpCount, params, result any) {
	chunks, empty := sqsBilled(params, result)
	c.mu.Lock()
	defer c.mu.Unlock()
	op.Chunks += chunks
	if empty {
		op.Empty++
	}
}
