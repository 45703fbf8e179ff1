package asyncinvoke

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/internal/esm"
)

// SQSAPI is the part of *sqs.Client a Poller uses.
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// Queue is the SQS queue a rule delivers a function's events to.
type Queue struct {
	URL string
	// Concurrency is how many events are handled at once (the function's
	// sandboxes); default 1.
	Concurrency int
	// WaitTime is one receive's long poll; default 1 s.
	WaitTime time.Duration
}

// Poller hands every event arriving on a Queue to Deliver.
type Poller struct {
	cfg   Config
	q     Queue
	api   SQSAPI
	fn    Invoker
	loops *esm.Loops
	slots chan struct{}
	log   *slog.Logger
}

// Start polls q until Stop.
func Start(cfg Config, q Queue, api SQSAPI, fn Invoker) (*Poller, error) {
	if q.URL == "" {
		return nil, errors.New("asyncinvoke: no queue URL")
	}
	if cfg.MaximumRetryAttempts < 0 || cfg.MaximumRetryAttempts > MaxRetryAttempts {
		return nil, errors.New("asyncinvoke: MaximumRetryAttempts must be 0 to 2")
	}
	q.WaitTime = esm.Or(q.WaitTime, time.Second)
	p := &Poller{cfg: cfg, q: q, api: api, fn: fn, loops: esm.NewLoops(), slots: make(chan struct{}, esm.Or(q.Concurrency, 1)),
		log: esm.Logger(cfg.Log, "function", cfg.Function, "queue", q.URL)}
	p.loops.Go(p.poll)
	return p, nil
}

// Stop ends polling and waits for the events in hand; their invocations
// are cancelled and they are lost, as Lambda's queued events would be if
// the function were deleted.
func (p *Poller) Stop() error { return p.loops.Stop() }

func (p *Poller) poll(ctx context.Context) {
	for ctx.Err() == nil {
		res, err := p.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(p.q.URL), MaxNumberOfMessages: 10,
			WaitTimeSeconds:             int32(max(p.q.WaitTime/time.Second, 1)),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp}})
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("asyncinvoke: receiving failed; trying again", "error", err)
				esm.Sleep(ctx, time.Second)
			}
			continue
		}
		for _, m := range res.Messages {
			p.accept(ctx, m)
		}
	}
}

// accept takes one event off the queue at once, as Lambda accepts an
// asynchronous invocation into its own queue (so none waits out the
// queue's visibility timeout and comes back), and delivers it once one
// of the function's Concurrency slots is free.
func (p *Poller) accept(ctx context.Context, m types.Message) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	_, err := p.api.DeleteMessage(dctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(p.q.URL), ReceiptHandle: m.ReceiptHandle})
	cancel()
	if err != nil {
		p.log.Warn("asyncinvoke: deleting an accepted event failed; it may be delivered again", "error", err)
	}
	received := sentAt(m)
	p.loops.Go(func(ctx context.Context) {
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-p.slots }()
		Deliver(ctx, p.cfg, p.fn, []byte(aws.ToString(m.Body)), received)
	})
}

// sentAt is when the rule put the event on the queue, else now.
func sentAt(m types.Message) time.Time {
	ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
	if err != nil {
		return time.Now()
	}
	return time.UnixMilli(ms)
}
