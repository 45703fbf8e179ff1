package asyncinvoke

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// fakeSQS hands out its messages once and records the deletes.
type fakeSQS struct {
	mu      sync.Mutex
	pending []types.Message
	deleted []string
}

func (f *fakeSQS) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.mu.Lock()
	n := min(len(f.pending), int(in.MaxNumberOfMessages))
	out := f.pending[:n]
	f.pending = f.pending[n:]
	f.mu.Unlock()
	if n == 0 {
		select { // a long poll that finds nothing
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return &sqs.ReceiveMessageOutput{Messages: out}, nil
}

func (f *fakeSQS) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, aws.ToString(in.ReceiptHandle))
	return &sqs.DeleteMessageOutput{}, nil
}

func (f *fakeSQS) deletes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.deleted)
}

// Each event on the rule's queue is taken off it at once (Lambda accepted
// it) and delivered with its retries: a failing function's events reach
// the destination after three invocations each.
func TestPollerDeliversEveryEventOnItsQueue(t *testing.T) {
	api := &fakeSQS{}
	sent := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for i := range 3 {
		api.pending = append(api.pending, types.Message{Body: aws.String(event), ReceiptHandle: aws.String("rh-" + strconv.Itoa(i)),
			Attributes: map[string]string{"SentTimestamp": sent}})
	}
	fn, dlq := &fakeFunction{failures: 99}, &fakeQueue{}
	p, err := Start(config(dlq), Queue{URL: "http://q", Concurrency: 2}, api, fn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	testkit.WaitFor(t, 10*time.Second, "3 events × 3 invocations, 3 records", func() bool {
		return fn.calls() == 9 && len(dlq.sent()) == 3 && api.deletes() == 3
	})
}

func TestStartRefusesABadConfig(t *testing.T) {
	if _, err := Start(Config{}, Queue{}, &fakeSQS{}, &fakeFunction{}); err == nil {
		t.Error("started without a queue")
	}
	if _, err := Start(Config{MaximumRetryAttempts: 3}, Queue{URL: "http://q"}, &fakeSQS{}, &fakeFunction{}); err == nil {
		t.Error("started with MaximumRetryAttempts 3")
	}
}
