//go:build integration

package sqssource

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// The test queues' settings: short, so redeliveries come within seconds.
const (
	visibility      = 1 // seconds
	maxReceiveCount = 3
)

// rig is moto's SQS and the test handler's bootstrap, shared by the tests.
type rig struct {
	sqs *sqs.Client
	bin string
}

func startRig(t *testing.T) rig {
	t.Helper()
	moto, err := harness.StartMoto(context.Background())
	if err != nil {
		t.Fatalf("this test needs moto_server for SQS (it does not skip): %v", err)
	}
	t.Cleanup(func() { _ = moto.Stop() })
	bin := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, "./testdata/handler")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the test handler: %v\n%s", err, out)
	}
	client := sqs.NewFromConfig(harness.AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto.Endpoint) })
	return rig{sqs: client, bin: bin}
}

// queues creates a work queue redriving to a dead-letter queue after
// maxReceiveCount receives, as template.yaml's PlacementQueue does.
func (r rig) queues(t *testing.T, name string) (work, workARN, dead string) {
	t.Helper()
	dead, deadARN := r.create(t, name+"-dlq", nil)
	policy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, deadARN, maxReceiveCount)
	work, workARN = r.create(t, name, map[string]string{"VisibilityTimeout": strconv.Itoa(visibility), "RedrivePolicy": policy})
	return work, workARN, dead
}

func (r rig) create(t *testing.T, name string, attrs map[string]string) (url, arn string) {
	t.Helper()
	ctx := context.Background()
	out, err := r.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl), got.Attributes[string(types.QueueAttributeNameQueueArn)]
}

func (r rig) send(t *testing.T, url string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := r.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
}

// start runs the handler in a sandbox and a mapping feeding it from url;
// the returned buffer collects the handler's "record ..." lines.
func (r rig) start(t *testing.T, url, arn string) *testkit.SyncBuffer {
	t.Helper()
	out := &testkit.SyncBuffer{}
	rt, err := runtimeapi.Start(context.Background(), r.bin, nil, runtimeapi.WithFunctionName("SQSTestFunction"), runtimeapi.WithLogOutput(out))
	if err != nil {
		t.Fatal(err)
	}
	invoke := invokerFunc(func(ctx context.Context, event []byte) ([]byte, error) {
		res, err := rt.Invoke(ctx, event, 10*time.Second)
		if err == nil && res.FunctionError != nil {
			err = res.FunctionError
		}
		return res.Payload, err
	})
	m, err := Start(Config{Function: "SQSTestFunction", QueueURL: url, QueueARN: arn, BatchSize: 10, ReportBatchItemFailures: true, WaitTime: time.Second}, r.sqs, invoke)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.Stop()
		_ = rt.Close()
		if t.Failed() {
			t.Logf("handler output:\n%s", out)
		}
	})
	return out
}

type invokerFunc func(ctx context.Context, event []byte) ([]byte, error)

func (f invokerFunc) Invoke(ctx context.Context, event []byte) ([]byte, error) { return f(ctx, event) }

var recordLine = regexp.MustCompile(`record body=(\S+) receive=(\d+) id=true handle=true source=aws:sqs arn=(\S+) region=us-east-1`)

// receives lists the receive counts the handler saw body with, checking
// every record's shape (an unexpected line fails the test).
func receives(t *testing.T, out *testkit.SyncBuffer, arn, body string) []int {
	t.Helper()
	var counts []int
	for _, line := range regexp.MustCompile(`record [^\n]*`).FindAllString(out.String(), -1) {
		m := recordLine.FindStringSubmatch(line)
		if m == nil || m[3] != arn {
			t.Fatalf("record line %q is not an SQS record of %s", line, arn)
		}
		if m[1] == body {
			n, _ := strconv.Atoi(m[2])
			counts = append(counts, n)
		}
	}
	return counts
}

// A succeeded message is deleted after its one delivery; one reported as a
// batch item failure comes back after the visibility timeout until it was
// received maxReceiveCount times, and then moto's redrive moves it to the
// dead-letter queue.
func TestMappingOnMotoRedeliversFailuresUntilTheDeadLetterQueue(t *testing.T) {
	r := startRig(t)
	work, arn, dead := r.queues(t, "redrive")
	r.send(t, work, "ok:a", "fail:a")
	out := r.start(t, work, arn)

	var dlq []string
	testkit.WaitFor(t, 20*time.Second, "fail:a in the dead-letter queue", func() bool {
		dlq = append(dlq, r.drain(t, dead)...)
		return len(dlq) > 0
	})
	if !slices.Equal(dlq, []string{"fail:a"}) {
		t.Errorf("dead-letter queue holds %q, want fail:a alone", dlq)
	}
	if got := receives(t, out, arn, "fail:a"); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("fail:a received with counts %v, want 1, 2, 3 (maxReceiveCount %d)", got, maxReceiveCount)
	}
	// A deleted message would have come back within a visibility timeout.
	time.Sleep(2 * visibility * time.Second)
	if got := receives(t, out, arn, "ok:a"); !slices.Equal(got, []int{1}) {
		t.Errorf("ok:a received with counts %v, want once: it succeeded and was deleted", got)
	}
	r.wantEmpty(t, work)
}

// An invocation that fails deletes none of its batch: its messages, the
// successful one too, come back after the visibility timeout.
func TestMappingOnMotoKeepsTheBatchOfAFailedInvocation(t *testing.T) {
	r := startRig(t)
	work, arn, dead := r.queues(t, "crash")
	r.send(t, work, "boom:b", "ok:b")
	out := r.start(t, work, arn)

	testkit.WaitFor(t, 15*time.Second, "both messages delivered twice", func() bool {
		return len(receives(t, out, arn, "boom:b")) == 2 && len(receives(t, out, arn, "ok:b")) == 2
	})
	time.Sleep(2 * visibility * time.Second)
	for _, body := range []string{"boom:b", "ok:b"} {
		if got := receives(t, out, arn, body); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("%s received with counts %v, want 1 (the failed invocation), 2 (then deleted)", body, got)
		}
	}
	r.wantEmpty(t, work)
	if got := r.drain(t, dead); len(got) != 0 {
		t.Errorf("dead-letter queue holds %q", got)
	}
}

// drain receives and deletes what url holds now.
func (r rig) drain(t *testing.T, url string) []string {
	t.Helper()
	ctx := context.Background()
	out, err := r.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
		if _, err := r.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	return bodies
}

// wantEmpty checks url holds no message, visible or in flight.
func (r rig) wantEmpty(t *testing.T, url string) {
	t.Helper()
	out, err := r.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range out.Attributes {
		if v != "0" {
			t.Errorf("%s: %s = %s, want 0", url, name, v)
		}
	}
}
