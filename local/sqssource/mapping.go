// Package sqssource emulates a Lambda event source mapping for an SQS
// queue, locally (moto's SQS): pollers long-poll ReceiveMessage, gather up
// to BatchSize messages within MaximumBatchingWindowInSeconds, invoke the
// function with Lambda's SQSEvent and then delete the messages it handled.
// An invocation that fails, or answers what Lambda cannot read, deletes
// none: they reappear once the queue's visibility timeout ends, and the
// queue's RedrivePolicy moves a message received maxReceiveCount times to
// its dead-letter queue (SQS does that on receive, moto too). With
// ReportBatchItemFailures the messages named in batchItemFailures stay.
package sqssource

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gamefabric-alloc/allocsvc/local/internal/esm"
)

// SQSAPI is the part of *sqs.Client a mapping uses.
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// Invoker runs the function; a failed invocation deletes none of the batch.
type Invoker = esm.Invoker

// Config is one event source mapping.
type Config struct {
	Function string // the function's name, for logs
	QueueURL string
	QueueARN string // the records' eventSourceARN
	Region   string // the records' awsRegion; default us-east-1

	BatchSize      int // 1 to 10000; default 10
	BatchingWindow time.Duration
	// ReportBatchItemFailures: the response's batchItemFailures name the
	// messages to keep; without it a successful invocation deletes all.
	ReportBatchItemFailures bool
	// Pollers is how many batches may be in flight at once (Lambda starts
	// with five and scales up); default 1.
	Pollers int

	// Local knobs: one receive's long poll (default 2 s, Lambda's is 20 s;
	// a shorter one leaves moto holding fewer abandoned receives after
	// Stop), and the pause after a failed receive (default 1 s).
	WaitTime     time.Duration
	ErrorBackoff time.Duration

	Log *slog.Logger
}

// Mapping is a running event source mapping.
type Mapping struct {
	cfg   Config
	api   SQSAPI
	fn    Invoker
	loops *esm.Loops
}

// Start polls the queue until Stop.
func Start(cfg Config, api SQSAPI, fn Invoker) (*Mapping, error) {
	if cfg.QueueURL == "" {
		return nil, errors.New("sqssource: no queue URL")
	}
	if cfg.BatchSize > 10000 || cfg.WaitTime > 20*time.Second {
		return nil, fmt.Errorf("sqssource: BatchSize %d (at most 10000) or WaitTime %v (at most 20 s) out of range", cfg.BatchSize, cfg.WaitTime)
	}
	cfg.Region = cmp.Or(cfg.Region, "us-east-1")
	cfg.BatchSize = esm.Or(cfg.BatchSize, 10)
	cfg.WaitTime = esm.Or(cfg.WaitTime, 2*time.Second)
	cfg.ErrorBackoff = esm.Or(cfg.ErrorBackoff, time.Second)
	cfg.Log = esm.Logger(cfg.Log, "function", cfg.Function, "queue", cfg.QueueURL)
	m := &Mapping{cfg: cfg, api: api, fn: fn, loops: esm.NewLoops()}
	for range esm.Or(cfg.Pollers, 1) {
		m.loops.Go(m.poll)
	}
	return m, nil
}

// Stop ends polling and waits for the pollers; a batch in flight has its
// invocation cancelled and is not deleted, so it reappears after the
// visibility timeout, as a batch of a Lambda that stopped would.
func (m *Mapping) Stop() error { return m.loops.Stop() }

// String describes the mapping for logs.
func (m *Mapping) String() string {
	return fmt.Sprintf("%s <- %s", m.cfg.Function, m.cfg.QueueURL)
}

// poll receives and delivers batches until ctx ends.
func (m *Mapping) poll(ctx context.Context) {
	for ctx.Err() == nil {
		batch, err := m.receiveBatch(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			m.cfg.Log.Warn("sqssource: receiving failed; trying again", "error", err)
			esm.Sleep(ctx, m.cfg.ErrorBackoff)
		case len(batch) == 0:
			// The long poll waited already; this only keeps a queue that
			// answers at once from being asked in a tight loop.
			esm.Sleep(ctx, 50*time.Millisecond)
		default:
			m.deliver(ctx, batch)
		}
	}
}
