package template

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Queue is an AWS::SQS::Queue resource with the settings a local queue
// honours; numbers take SQS's defaults when the template leaves them out.
type Queue struct {
	LogicalID string
	// Name is QueueName, or "" when the template lets CloudFormation name it.
	Name string
	// VisibilityTimeout hides a received message this long (default 30 s).
	VisibilityTimeout time.Duration
	// MessageRetention is MessageRetentionPeriod (default 4 days).
	MessageRetention time.Duration
	// Delay is DelaySeconds, every new message's delay (default 0).
	Delay time.Duration
	// Redrive is the RedrivePolicy, or nil.
	Redrive *Redrive
}

// Redrive is a queue's RedrivePolicy: a message received MaxReceiveCount
// times without being deleted moves to DeadLetterQueue.
type Redrive struct {
	// DeadLetterQueue is the logical ID of deadLetterTargetArn's queue
	// (!GetAtt <Queue>.Arn): locally the queue is known by it.
	DeadLetterQueue string
	MaxReceiveCount int
}

// Queues returns every AWS::SQS::Queue in template order. Values that are
// !Ref parameters take their defaults.
func (t *Template) Queues() ([]Queue, error) {
	var out []Queue
	r := resolver{t: t}
	for _, res := range t.resources {
		if res.typ != TypeSQSQueue {
			continue
		}
		q, err := r.queue(res.id, res.props)
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", res.id, err)
		}
		out = append(out, q)
	}
	return out, nil
}

func (r resolver) queue(id string, p *yaml.Node) (Queue, error) {
	q := Queue{LogicalID: id, VisibilityTimeout: 30 * time.Second, MessageRetention: 345600 * time.Second}
	var err error
	if n := lookup(p, "QueueName"); n != nil {
		if q.Name, err = r.str(n, "QueueName"); err != nil {
			return q, err
		}
	}
	// The local poller knows nothing of message groups and ordering.
	if n := lookup(p, "FifoQueue"); n != nil {
		if fifo, err := r.boolean(n, "FifoQueue"); err != nil || fifo {
			return q, fmt.Errorf("FifoQueue: FIFO queues do not run locally (%v)", err)
		}
	}
	seconds := []struct {
		key      string
		min, max int64
		into     *time.Duration
	}{
		{"VisibilityTimeout", 0, 43200, &q.VisibilityTimeout},
		{"MessageRetentionPeriod", 60, 1209600, &q.MessageRetention},
		{"DelaySeconds", 0, 900, &q.Delay},
	}
	for _, s := range seconds {
		if v, ok, err := r.intIn(p, s.key, s.min, s.max); err != nil {
			return q, err
		} else if ok {
			*s.into = time.Duration(v) * time.Second
		}
	}
	q.Redrive, err = r.redrive(lookup(p, "RedrivePolicy"))
	return q, err
}

// redrive reads a RedrivePolicy written as a mapping. CloudFormation also
// takes the policy as a JSON string; locally that is refused, not guessed.
func (r resolver) redrive(n *yaml.Node) (*Redrive, error) {
	policy, err := r.object(n, "RedrivePolicy")
	if err != nil || policy == nil {
		return nil, err
	}
	dlq, err := r.getAttOf(lookup(policy, "deadLetterTargetArn"), "RedrivePolicy.deadLetterTargetArn", "Arn", TypeSQSQueue)
	if err != nil {
		return nil, err
	}
	count, ok, err := r.intIn(policy, "maxReceiveCount", 1, 1000)
	if err != nil {
		return nil, fmt.Errorf("RedrivePolicy.%w", err)
	}
	if !ok {
		return nil, fmt.Errorf("RedrivePolicy: maxReceiveCount is required")
	}
	return &Redrive{DeadLetterQueue: dlq, MaxReceiveCount: int(count)}, nil
}
