package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/sqssource"
	"github.com/gamefabric-alloc/allocsvc/shared/app/placementapp"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// PlacementFunction is the queue worker's logical ID.
const PlacementFunction = "PlacementFunction"

// lambdaPollers is how many batches Lambda's SQS event source starts with.
const lambdaPollers = 5

// placementRig is a queued placement's whole path in process, every AWS
// request counted by SDK middleware: the allocate handler (POST) and
// PlacementFunction's handler, each built by its own composition root from
// the environment the stack gives its bootstrap, and between them a queue
// of the rig's own in moto (PlacementQueue's settings) polled by an event
// source mapping (local/sqssource, the template's settings). Both handlers
// ask a GameFabric stand-in of the rig's own. The stack's PlacementQueue,
// its mapping and its stand-in are left alone, so a rig runs beside a
// measurement on the stack without either seeing the other's placements.
type placementRig struct {
	standIn  *StandIn
	post     *InProcess  // AllocateFunction
	worker   *SDKCounter // PlacementFunction's clients; the mapping's as "SQS event source"
	invoker  *countingInvoker
	logs     *countingWriter // PlacementFunction's output
	mapping  *sqssource.Mapping
	sqs      *sqs.Client // uncounted: the rig's own set-up and checks
	queueURL string
}

// newPlacementRig builds a rig with a queue named name.
func newPlacementRig(ctx context.Context, s *Stack, name string) (r *placementRig, err error) {
	r = &placementRig{standIn: StartStandIn(s.StandIn.Delay), worker: NewSDKCounter(), logs: &countingWriter{}, sqs: s.SQS()}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	arn, err := r.createQueue(ctx, s, name)
	if err != nil {
		return r, err
	}
	override := map[string]string{"GAMEFABRIC_URL": r.standIn.URL, "PLACEMENT_QUEUE_URL": r.queueURL}
	if r.post, err = newInProcess(s, override); err != nil {
		return r, err
	}
	cfg, err := functionConfig(s, PlacementFunction, override)
	if err != nil {
		return r, err
	}
	handler, err := placementapp.New(cfg, countedClients(s, r.worker, r.logs), logging.New(r.logs, cfg.LogLevel))
	if err != nil {
		return r, err
	}
	timeout, err := s.Template.FunctionTimeout(PlacementFunction)
	if err != nil {
		return r, err
	}
	r.invoker = &countingInvoker{handler: handler, timeout: timeout}
	src, err := placementSource(s)
	if err != nil {
		return r, err
	}
	pollers := lambdaPollers
	if src.Pollers > 0 { // MaximumConcurrency
		pollers = min(pollers, src.Pollers)
	}
	src.QueueURL, src.QueueARN, src.Pollers = r.queueURL, arn, pollers
	r.mapping, err = sqssource.Start(src, countedSQS(s, r.worker, "SQS event source"), r.invoker)
	return r, err
}

// createQueue creates the rig's queue with PlacementQueue's visibility
// timeout and retention, and returns its ARN.
func (r *placementRig) createQueue(ctx context.Context, s *Stack, name string) (string, error) {
	queues, err := s.Template.Queues()
	if err != nil {
		return "", err
	}
	attrs := map[string]string{}
	for _, q := range queues {
		if q.LogicalID == "PlacementQueue" {
			attrs[string(sqstypes.QueueAttributeNameVisibilityTimeout)] = strconv.Itoa(int(q.VisibilityTimeout / time.Second))
			attrs[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)] = strconv.Itoa(int(q.MessageRetention / time.Second))
		}
	}
	if len(attrs) == 0 {
		return "", errors.New("placement rig: template.yaml has no PlacementQueue")
	}
	out, err := r.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", fmt.Errorf("placement rig: create queue %s: %w", name, err)
	}
	r.queueURL = aws.ToString(out.QueueUrl)
	got, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", fmt.Errorf("placement rig: queue %s: %w", name, err)
	}
	return got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

// placementSource is PlacementFunction's SQS event source as the stack
// configures it from template.yaml (batch size, batching window, batch
// item failures), with MaximumConcurrency in Pollers.
func placementSource(s *Stack) (sqssource.Config, error) {
	sources, err := s.Template.SQSEventSources(s.Refs)
	if err != nil {
		return sqssource.Config{}, err
	}
	for _, src := range sources {
		if src.FunctionLogicalID == PlacementFunction && src.Enabled {
			cfg, err := s.QueueSourceConfig(src)
			cfg.Pollers = src.MaximumConcurrency
			return cfg, err
		}
	}
	return sqssource.Config{}, errors.New("placement rig: template.yaml gives PlacementFunction no SQS event")
}

// drained reports whether the rig's queue holds no message, visible,
// delayed or in flight (moto's counts are exact).
func (r *placementRig) drained(ctx context.Context) (bool, error) {
	out, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(r.queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		return false, err
	}
	for _, a := range []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed} {
		if v := out.Attributes[string(a)]; v != "" && v != "0" {
			return false, nil
		}
	}
	return true, nil
}

// Close stops the mapping, deletes the queue and stops the stand-in.
func (r *placementRig) Close() {
	if r.mapping != nil {
		_ = r.mapping.Stop()
	}
	if r.queueURL != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = r.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(r.queueURL)})
		cancel()
	}
	r.standIn.Close()
}

// countingInvoker is Lambda invoking PlacementFunction's handler in
// process: the event decoded, a deadline of the function's timeout, the
// answer encoded; it counts invocations and messages and times each.
type countingInvoker struct {
	handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	timeout time.Duration

	mu                   sync.Mutex
	invocations, records int
	handedBack           int     // messages named in batchItemFailures
	billedMs             float64 // each invocation's time rounded up to Lambda's 1 ms, summed
	took                 []time.Duration
}

func (c *countingInvoker) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	c.mu.Lock()
	c.invocations++
	id := "bench-placement-" + strconv.Itoa(c.invocations)
	c.mu.Unlock()
	start := time.Now()
	resp, err := c.handler(lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: id}), ev)
	d := time.Since(start)
	c.mu.Lock()
	c.records, c.handedBack = c.records+len(ev.Records), c.handedBack+len(resp.BatchItemFailures)
	c.billedMs += math.Ceil(toMs(d))
	c.took = append(c.took, d)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}

// counts are the invoker's totals so far.
func (c *countingInvoker) counts() (invocations, records, handedBack int, billedMs float64, took Summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.invocations, c.records, c.handedBack, c.billedMs, Summarize(c.took)
}
