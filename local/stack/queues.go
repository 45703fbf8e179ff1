package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/sqssource"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// QueueTuning are the local SQS event sources' knobs.
type QueueTuning struct {
	// WaitTime is one receive's long poll (sqssource's default when 0).
	WaitTime time.Duration
	// Off starts no SQS event source: messages then wait in their queue.
	Off bool
}

// createQueues creates the template's SQS queues in moto with their
// settings: each with its own first, then the redrive policies, so a
// dead-letter queue exists whatever the template order. moto moves a
// message received maxReceiveCount times to it, as SQS does.
func (c *Components) createQueues(ctx context.Context, q *sqs.Client) error {
	queues, err := c.Template.Queues()
	if err != nil {
		return err
	}
	c.Queues, c.QueueARNs = map[string]string{}, map[string]string{}
	for _, tq := range queues {
		name := tq.Name
		if name == "" {
			name = tq.LogicalID
		}
		url, arn, err := createQueue(ctx, q, name, queueAttributes(tq))
		if err != nil {
			return fmt.Errorf("queue %s: %w", tq.LogicalID, err)
		}
		c.Queues[tq.LogicalID], c.QueueARNs[tq.LogicalID] = url, arn
	}
	for _, tq := range queues {
		if tq.Redrive == nil {
			continue
		}
		dlq, ok := c.QueueARNs[tq.Redrive.DeadLetterQueue]
		if !ok {
			return fmt.Errorf("queue %s: no dead-letter queue %s", tq.LogicalID, tq.Redrive.DeadLetterQueue)
		}
		policy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlq, tq.Redrive.MaxReceiveCount)
		_, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(c.Queues[tq.LogicalID]),
			Attributes: map[string]string{string(sqstypes.QueueAttributeNameRedrivePolicy): policy}})
		if err != nil {
			return fmt.Errorf("queue %s RedrivePolicy: %w", tq.LogicalID, err)
		}
	}
	return nil
}

// queueAttributes are a template queue's settings as SQS attributes.
func queueAttributes(q template.Queue) map[string]string {
	seconds := func(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }
	return map[string]string{
		string(sqstypes.QueueAttributeNameVisibilityTimeout):      seconds(q.VisibilityTimeout),
		string(sqstypes.QueueAttributeNameMessageRetentionPeriod): seconds(q.MessageRetention),
		string(sqstypes.QueueAttributeNameDelaySeconds):           seconds(q.Delay),
	}
}

// createQueue creates a queue in moto and returns its URL and the ARN
// moto gave it (a redrive policy must name exactly that).
func createQueue(ctx context.Context, q *sqs.Client, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", "", fmt.Errorf("create queue %s: %w", name, err)
	}
	got, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("queue %s ARN: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

// QueueSourceConfig is the sqssource.Config of an SQS event of the
// template, on its queue in moto.
func (c *Components) QueueSourceConfig(src template.SQSEventSource) (sqssource.Config, error) {
	url, ok := c.Queues[src.QueueLogicalID]
	if !ok {
		return sqssource.Config{}, fmt.Errorf("%s event %s: no queue %s", src.FunctionLogicalID, src.EventName, src.QueueLogicalID)
	}
	return sqssource.Config{
		Function: src.FunctionLogicalID, QueueURL: url, QueueARN: c.QueueARNs[src.QueueLogicalID], Region: harness.Region,
		BatchSize: src.BatchSize, BatchingWindow: src.MaximumBatchingWindow, ReportBatchItemFailures: src.ReportBatchItemFailures,
	}, nil
}

// startQueueSources runs one mapping per enabled SQS event of every
// function, invoking it through its pool with its template timeout, with
// up to pollers batches in flight (capped by ScalingConfig's
// MaximumConcurrency).
func (s *Stack) startQueueSources(refs map[string]string, tuning QueueTuning, pollers int, log io.Writer) error {
	if tuning.Off {
		return nil
	}
	sources, err := s.Template.SQSEventSources(refs)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(log, nil))
	for _, src := range sources {
		if !src.Enabled {
			continue // Lambda polls no disabled mapping
		}
		pool, ok := s.pools[src.FunctionLogicalID]
		if !ok {
			return fmt.Errorf("%s event %s: no such function", src.FunctionLogicalID, src.EventName)
		}
		timeout, err := s.Template.FunctionTimeout(src.FunctionLogicalID)
		if err != nil {
			return err
		}
		cfg, err := s.QueueSourceConfig(src)
		if err != nil {
			return err
		}
		cfg.Pollers, cfg.WaitTime, cfg.Log = pollers, tuning.WaitTime, logger
		if src.MaximumConcurrency > 0 {
			cfg.Pollers = min(pollers, src.MaximumConcurrency)
		}
		m, err := sqssource.Start(cfg, s.SQS(), PoolInvoker(pool, timeout))
		if err != nil {
			return err
		}
		s.QueueSources = append(s.QueueSources, m)
		s.closers = append(s.closers, m.Stop)
	}
	return nil
}
