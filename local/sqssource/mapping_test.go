package sqssource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"go.uber.org/goleak"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// fakeSQS hands out its messages (each once) and records receives and
// deletes. An empty receive answers at once.
type fakeSQS struct {
	mu       sync.Mutex
	waiting  []types.Message
	receives []*sqs.ReceiveMessageInput
	deleted  []string // receipt handles
	failRecv error
}

func newFake(n int) *fakeSQS {
	f := &fakeSQS{}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("m%d", i)
		f.waiting = append(f.waiting, types.Message{MessageId: aws.String(id), ReceiptHandle: aws.String("rh-" + id), Body: aws.String(id)})
	}
	return f
}

func (f *fakeSQS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.receives = append(f.receives, in)
	if f.failRecv != nil {
		return nil, f.failRecv
	}
	n := min(int(in.MaxNumberOfMessages), len(f.waiting))
	out := &sqs.ReceiveMessageOutput{Messages: f.waiting[:n]}
	f.waiting = f.waiting[n:]
	return out, nil
}

func (f *fakeSQS) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(in.Entries) > 10 {
		return nil, errors.New("too many entries")
	}
	for _, e := range in.Entries {
		f.deleted = append(f.deleted, aws.ToString(e.ReceiptHandle))
	}
	return &sqs.DeleteMessageBatchOutput{}, nil
}

func (f *fakeSQS) snapshot() (deleted []string, receives int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := slices.Clone(f.deleted)
	slices.Sort(d)
	return d, len(f.receives)
}

// recorder is a function answering each batch with respond.
type recorder struct {
	mu      sync.Mutex
	batches [][]string // message IDs per invocation
	respond func(ids []string) ([]byte, error)
}

func (r *recorder) Invoke(_ context.Context, event []byte) ([]byte, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, err
	}
	var ids []string
	for _, rec := range ev.Records {
		ids = append(ids, rec.MessageId)
	}
	r.mu.Lock()
	r.batches = append(r.batches, ids)
	r.mu.Unlock()
	return r.respond(ids)
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, b := range r.batches {
		out = append(out, len(b))
	}
	return out
}

func failing(ids ...string) func([]string) ([]byte, error) {
	return func([]string) ([]byte, error) {
		var res events.SQSEventResponse
		for _, id := range ids {
			res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
		return json.Marshal(res)
	}
}

func TestMappingDeletesWhatTheFunctionHandled(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name        string
		report      bool
		respond     func([]string) ([]byte, error)
		wantDeleted []string
	}{
		{"all handled", true, failing(), []string{"rh-m1", "rh-m2", "rh-m3"}},
		{"one reported failed", true, failing("m2"), []string{"rh-m1", "rh-m3"}},
		{"failures not reported", false, failing("m2"), []string{"rh-m1", "rh-m2", "rh-m3"}},
		{"invocation error", true, func([]string) ([]byte, error) { return nil, errors.New("crash") }, nil},
		{"unreadable response", true, func([]string) ([]byte, error) { return []byte("{"), nil }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, fn := newFake(3), &recorder{respond: tc.respond}
			m, err := Start(Config{Function: "F", QueueURL: "q", ReportBatchItemFailures: tc.report}, api, fn)
			if err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, 5*time.Second, "one invocation and a receive after it", func() bool {
				_, receives := api.snapshot()
				return len(fn.sizes()) == 1 && receives >= 3
			})
			if err := m.Stop(); err != nil {
				t.Fatal(err)
			}
			if deleted, _ := api.snapshot(); !reflect.DeepEqual(deleted, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", deleted, tc.wantDeleted)
			}
		})
	}
}

// Batches as Lambda makes them: BatchSize at most, more than one receive
// only within a batching window, ten messages per receive at most.
func TestMappingBatches(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name      string
		messages  int
		batchSize int
		window    time.Duration
		want      []int
	}{
		{"one receive without a window", 25, 25, 0, []int{10, 10, 5}},
		{"gathered within the window", 25, 25, 500 * time.Millisecond, []int{25}},
		{"batch size caps", 25, 7, 500 * time.Millisecond, []int{7, 7, 7, 4}},
		{"small batches", 3, 1, 0, []int{1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, fn := newFake(tc.messages), &recorder{respond: failing()}
			m, err := Start(Config{QueueURL: "q", BatchSize: tc.batchSize, BatchingWindow: tc.window}, api, fn)
			if err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, 5*time.Second, "every message deleted", func() bool {
				deleted, _ := api.snapshot()
				return len(deleted) == tc.messages
			})
			_ = m.Stop()
			if got := fn.sizes(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("batch sizes %v, want %v", got, tc.want)
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			for _, in := range api.receives {
				if in.MaxNumberOfMessages < 1 || in.MaxNumberOfMessages > 10 || in.WaitTimeSeconds < 1 || in.WaitTimeSeconds > 20 ||
					!reflect.DeepEqual(in.MessageAttributeNames, []string{"All"}) || len(in.MessageSystemAttributeNames) != 1 {
					t.Fatalf("receive %+v", in)
				}
			}
		})
	}
}

// A queue that cannot be read is asked again after a pause, not in a
// tight loop, and Stop still ends the pollers.
func TestMappingBacksOffAfterReceiveErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	api := newFake(0)
	api.failRecv = errors.New("moto is gone")
	m, err := Start(Config{QueueURL: "q", Pollers: 2, ErrorBackoff: 100 * time.Millisecond}, api, &recorder{respond: failing()})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(350 * time.Millisecond)
	_ = m.Stop()
	if _, receives := api.snapshot(); receives < 2 || receives > 10 {
		t.Errorf("%d receives in 350 ms by 2 pollers backing off 100 ms", receives)
	}
}

func TestStartRejects(t *testing.T) {
	for _, cfg := range []Config{{}, {QueueURL: "q", BatchSize: 10001}, {QueueURL: "q", WaitTime: 21 * time.Second}} {
		if _, err := Start(cfg, newFake(0), &recorder{}); err == nil {
			t.Errorf("Start(%+v) succeeded", cfg)
		}
	}
}
