package template

import (
	"fmt"
	"time"
)

// Queue is an AWS::SQS::Queue resource with the settings a local queue
// honours; numbers take SQS's defaults when the template leaves them out.
type Queue struct {
	LogicalID         string
	Name              string        `cfn:"QueueName"` // "" when CloudFormation names it
	VisibilityTimeout time.Duration `range:"0,43200"`
	MessageRetention  time.Duration `cfn:"MessageRetentionPeriod" range:"60,1209600"`
	Delay             time.Duration `cfn:"DelaySeconds" range:"0,900"`
	// Redrive is the RedrivePolicy, or nil. CloudFormation also takes the
	// policy as a JSON string; locally that is refused, not guessed.
	Redrive *Redrive `cfn:"RedrivePolicy"`
}

// Redrive is a queue's RedrivePolicy: a message received MaxReceiveCount
// times without being deleted moves to DeadLetterQueue.
type Redrive struct {
	DeadLetterQueue string `cfn:"deadLetterTargetArn,required" getatt:"Arn AWS::SQS::Queue"`
	MaxReceiveCount int    `cfn:"maxReceiveCount,required" range:"1,1000"`
}

// Queues returns every AWS::SQS::Queue in template order. Values that are
// !Ref parameters take their defaults.
func (t *Template) Queues() ([]Queue, error) {
	r := resolver{t: t}
	return each(r, TypeSQSQueue, "queue", func(res *resource) (Queue, error) {
		q := Queue{LogicalID: res.id, VisibilityTimeout: 30 * time.Second, MessageRetention: 345600 * time.Second}
		err := r.decode(res.props, "", &q)
		// The local poller knows nothing of message groups and ordering.
		if n := lookup(res.props, "FifoQueue"); err == nil && n != nil {
			if fifo, ferr := r.boolean(n, "FifoQueue"); ferr != nil || fifo {
				err = fmt.Errorf("FifoQueue: FIFO queues do not run locally (%v)", ferr)
			}
		}
		return q, err
	})
}

// EventBus is an AWS::Events::EventBus resource.
type EventBus struct {
	LogicalID string
	Name      string `cfn:",required"` // evaluated (AWS::StackName is "local")
}

// EventBuses returns every AWS::Events::EventBus in template order.
func (t *Template) EventBuses() ([]EventBus, error) {
	r := resolver{t: t}
	return each(r, TypeEventsEventBus, "event bus", func(res *resource) (EventBus, error) {
		b := EventBus{LogicalID: res.id}
		return b, r.decode(res.props, "", &b)
	})
}
