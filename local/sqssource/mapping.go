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
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SQSAPI is the part of *sqs.Client a mapping uses.
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// Invoker runs the function once, synchronously, with event and returns
// its response payload. Any error is a failed invocation (a function
// error, a timeout, a crash): none of the batch is deleted.
type Invoker interface {
	Invoke(ctx context.Context, event []byte) ([]byte, error)
}

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
	cfg    Config
	api    SQSAPI
	fn     Invoker
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start polls the queue until Stop.
func Start(cfg Config, api SQSAPI, fn Invoker) (*Mapping, error) {
	if cfg.QueueURL == "" {
		return nil, errors.New("sqssource: no queue URL")
	}
	if cfg.BatchSize > 10000 || cfg.WaitTime > 20*time.Second {
		return nil, fmt.Errorf("sqssource: BatchSize %d (at most 10000) or WaitTime %v (at most 20 s) out of range", cfg.BatchSize, cfg.WaitTime)
	}
	cfg = withDefaults(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Mapping{cfg: cfg, api: api, fn: fn, cancel: cancel}
	for range cfg.Pollers {
		m.wg.Add(1)
		go m.poll(ctx)
	}
	return m, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 10
	}
	if cfg.Pollers <= 0 {
		cfg.Pollers = 1
	}
	if cfg.WaitTime <= 0 {
		cfg.WaitTime = 2 * time.Second
	}
	if cfg.ErrorBackoff <= 0 {
		cfg.ErrorBackoff = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Log = cfg.Log.With("function", cfg.Function, "queue", cfg.QueueURL)
	return cfg
}

// Stop ends polling and waits for the pollers; a batch in flight has its
// invocation cancelled and is not deleted, so it reappears after the
// visibility timeout, as a batch of a Lambda that stopped would.
func (m *Mapping) Stop() error {
	m.cancel()
	m.wg.Wait()
	return nil
}

// String describes the mapping for logs.
func (m *Mapping) String() string {
	return fmt.Sprintf("%s <- %s", m.cfg.Function, m.cfg.QueueURL)
}

// poll receives and delivers batches until ctx ends.
func (m *Mapping) poll(ctx context.Context) {
	defer m.wg.Done()
	for ctx.Err() == nil {
		batch, err := m.receiveBatch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				m.cfg.Log.Warn("sqssource: receiving failed; trying again", "error", err)
				sleep(ctx, m.cfg.ErrorBackoff)
			}
			continue
		}
		if len(batch) == 0 {
			// The long poll waited already; this only keeps a queue that
			// answers at once from being asked in a tight loop.
			sleep(ctx, 50*time.Millisecond)
			continue
		}
		m.deliver(ctx, batch)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
