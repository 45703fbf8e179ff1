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
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

const PlacementFunction = "PlacementFunction"

// lambdaPollers is how many batches Lambda's SQS event source starts with.
const lambdaPollers = 5

// placementRig is a queued placement's whole path in process, every AWS
// request counted: the allocate and PlacementFunction handlers, and between
// them a queue of its own in moto polled by local/sqssource, all with the
// template's settings. Its own stand-in keeps it apart from the stack's.
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
	if r.post, err = NewInProcess(s, override); err != nil {
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
	r.invoker = &countingInvoker{handler: handler}
	if r.invoker.timeout, err = s.Template.FunctionTimeout(PlacementFunction); err != nil {
		return r, err
	}
	sources, err := s.Template.SQSEventSources(s.Refs)
	if err != nil {
		return r, err
	}
	for _, src := range sources {
		if src.FunctionLogicalID != PlacementFunction || !src.Enabled {
			continue
		}
		cfg, err := s.QueueSourceConfig(src)
		if err != nil {
			return r, err
		}
		cfg.QueueURL, cfg.QueueARN, cfg.Pollers = r.queueURL, arn, lambdaPollers
		if src.MaximumConcurrency > 0 {
			cfg.Pollers = min(lambdaPollers, src.MaximumConcurrency)
		}
		r.mapping, err = sqssource.Start(cfg, countedSQS(s, r.worker, "SQS event source"), r.invoker)
		return r, err
	}
	return r, errors.New("placement rig: template.yaml gives PlacementFunction no SQS event")
}

// createQueue creates the queue with PlacementQueue's settings; it returns
// its ARN.
func (r *placementRig) createQueue(ctx context.Context, s *Stack, name string) (string, error) {
	queues, err := s.Template.Queues()
	if err != nil {
		return "", err
	}
	attrs := map[string]string{}
	for _, q := range queues {
		if q.LogicalID == "PlacementQueue" {
			attrs[string(sqstypes.QueueAttributeNameVisibilityTimeout)] = strconv.Itoa(int(q.VisibilityTimeout.Seconds()))
			attrs[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)] = strconv.Itoa(int(q.MessageRetention.Seconds()))
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
	arn, err := r.attributes(ctx, sqstypes.QueueAttributeNameQueueArn)
	return arn[string(sqstypes.QueueAttributeNameQueueArn)], err
}

func (r *placementRig) attributes(ctx context.Context, names ...sqstypes.QueueAttributeName) (map[string]string, error) {
	out, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(r.queueURL), AttributeNames: names})
	if err != nil {
		return nil, fmt.Errorf("placement rig: queue attributes: %w", err)
	}
	return out.Attributes, nil
}

// settle polls the records (uncounted) until none is Queued or Allocating
// and every message is deleted: 200 ms apart, at most settlePolls times.
func (r *placementRig) settle(ctx context.Context, s *Stack, prefix string, n int) error {
	records := store.NewGameInstances(s.DDB, s.Tables["GameInstancesTable"])
	pending := map[string]bool{}
	for i := range n {
		pending[prefix+strconv.Itoa(i)] = true
	}
	for range settlePolls {
		for id := range pending {
			rec, err := records.Get(ctx, id)
			if err != nil && !errors.Is(err, gameinstance.ErrNotFound) {
				return fmt.Errorf("queued cost: read %s: %w", id, err)
			}
			if err == nil && rec.State != gameinstance.StateQueued && rec.State != gameinstance.StateAllocating {
				delete(pending, id)
			}
		}
		if len(pending) == 0 {
			if empty, err := r.drained(ctx); err != nil || empty {
				return err
			}
		}
		if err := wait.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("queued cost: %d placements still pending: %w", len(pending), err)
		}
	}
	return fmt.Errorf("queued cost: %d placements still pending after %d polls", len(pending), settlePolls)
}

// drained: no message visible, delayed or in flight (moto's counts are exact).
func (r *placementRig) drained(ctx context.Context) (bool, error) {
	names := []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}
	attrs, err := r.attributes(ctx, names...)
	for _, a := range names {
		if v := attrs[string(a)]; v != "" && v != "0" {
			return false, err
		}
	}
	return err == nil, err
}

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

// countingInvoker is Lambda invoking PlacementFunction's handler: the
// event decoded, the function's timeout, the answer encoded.
type countingInvoker struct {
	handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	timeout time.Duration

	mu                   sync.Mutex
	invocations, records int
	billedMs             float64
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
	c.records += len(ev.Records)
	c.billedMs += math.Ceil(toMs(d))
	c.took = append(c.took, d)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}
