package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

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
			&sqs.ReceiveMessageOutput{Messages: []types.Message{{Body: body(40 << 10)}, {Body: body(40 << 10)}}}, 2, false},
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
