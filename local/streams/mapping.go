// Package streams emulates a Lambda event source mapping for a DynamoDB
// stream, locally: it polls every shard of the stream through the DynamoDB
// Streams API (DynamoDB Local's), drops records the FilterCriteria rejects,
// batches the rest (BatchSize, MaximumBatchingWindowInSeconds), invokes the
// function with Lambda's DynamoDBEvent and handles the outcome as Lambda
// does: ReportBatchItemFailures (retry from the lowest failed sequence
// number), retries of failed invocations with BisectBatchOnFunctionError,
// MaximumRetryAttempts and MaximumRecordAgeInSeconds, and an on-failure
// record (DDBStreamBatchInfo) sent to the destination for every batch set
// aside. Records of a shard go to the function in order, one batch at a
// time; a shard's children start when it is finished.
package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// StreamsAPI is the part of *dynamodbstreams.Client a mapping uses.
type StreamsAPI interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// Invoker runs the function once, synchronously, with event and returns
// its response payload. Any error is a failed invocation (a function error,
// a timeout, a crash): Lambda retries those.
type Invoker interface {
	Invoke(ctx context.Context, event []byte) ([]byte, error)
}

// InvokerFunc adapts a function to Invoker.
type InvokerFunc func(ctx context.Context, event []byte) ([]byte, error)

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, event []byte) ([]byte, error) { return f(ctx, event) }

// Destination receives the on-failure records of batches set aside (an SQS
// queue in Lambda).
type Destination interface {
	Send(ctx context.Context, body string) error
}

// Config is one event source mapping.
type Config struct {
	Function    string // the function's name, for logs and the on-failure record
	FunctionARN string // requestContext.functionArn; default arn:aws:lambda:<Region>:123456789012:function:<Function>
	StreamARN   string
	Region      string // awsRegion of the records; default us-east-1

	StartingPosition string // TRIM_HORIZON (default) or LATEST
	BatchSize        int    // default 100
	BatchingWindow   time.Duration
	// MaximumRetryAttempts: -1 retries until the record is too old (or
	// forever without MaximumRecordAge).
	MaximumRetryAttempts       int
	BisectBatchOnFunctionError bool
	MaximumRecordAge           time.Duration // 0: no limit
	ReportBatchItemFailures    bool
	Filter                     *Filter     // nil: every record
	OnFailure                  Destination // nil: records set aside are logged and discarded, as Lambda does without one

	// Local knobs, with short defaults: how often an idle shard is polled
	// (250 ms, Lambda's four times a second), the pause before retrying a
	// failed batch (200 ms) and how often new shards are looked for (2 s).
	PollInterval     time.Duration
	RetryBackoff     time.Duration
	DescribeInterval time.Duration

	Log *slog.Logger
}

// Mapping is a running event source mapping.
type Mapping struct {
	cfg    Config
	api    StreamsAPI
	fn     Invoker
	cancel context.CancelFunc
	done   chan struct{}
	now    func() time.Time
}

// Start polls the stream until Stop.
func Start(cfg Config, api StreamsAPI, fn Invoker) (*Mapping, error) {
	if cfg.StreamARN == "" {
		return nil, errors.New("streams: no stream ARN")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.FunctionARN == "" {
		cfg.FunctionARN = "arn:aws:lambda:" + cfg.Region + ":123456789012:function:" + cfg.Function
	}
	if cfg.StartingPosition == "" {
		cfg.StartingPosition = string(types.ShardIteratorTypeTrimHorizon)
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 200 * time.Millisecond
	}
	if cfg.DescribeInterval <= 0 {
		cfg.DescribeInterval = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Log = cfg.Log.With("function", cfg.Function, "stream", cfg.StreamARN)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Mapping{cfg: cfg, api: api, fn: fn, cancel: cancel, done: make(chan struct{}), now: time.Now}
	go m.run(ctx)
	return m, nil
}

// Stop ends polling and waits for the batch in flight, if any, to end
// (its invocation is cancelled).
func (m *Mapping) Stop() error {
	m.cancel()
	<-m.done
	return nil
}

// run discovers shards and runs one worker per shard whose parent is done.
func (m *Mapping) run(ctx context.Context) {
	defer close(m.done)
	var wg sync.WaitGroup
	defer wg.Wait()
	started, finished := map[string]bool{}, map[string]bool{}
	finishedCh := make(chan string, 16)
	first := true
	for {
		shards, err := m.describe(ctx)
		if err != nil && ctx.Err() == nil {
			m.cfg.Log.Warn("streams: describing the stream failed; trying again", "error", err)
		}
		known := map[string]bool{}
		for _, s := range shards {
			known[aws.ToString(s.ShardId)] = true
		}
		for _, s := range shards {
			id, parent := aws.ToString(s.ShardId), aws.ToString(s.ParentShardId)
			if started[id] || (parent != "" && known[parent] && !finished[parent]) {
				continue
			}
			// Shards there at the start begin at StartingPosition; any
			// found later (children, new shards) from their beginning.
			pos := types.ShardIteratorTypeTrimHorizon
			if first {
				pos = types.ShardIteratorType(m.cfg.StartingPosition)
			}
			started[id] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.runShard(ctx, id, pos)
				select {
				case finishedCh <- id:
				case <-ctx.Done():
				}
			}()
		}
		if err == nil {
			first = false
		}
		timer := time.NewTimer(m.cfg.DescribeInterval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case id := <-finishedCh:
			finished[id] = true
		case <-timer.C:
		}
		timer.Stop()
	}
}

func (m *Mapping) describe(ctx context.Context) ([]types.Shard, error) {
	var shards []types.Shard
	var start *string
	for {
		out, err := m.api.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(m.cfg.StreamARN), ExclusiveStartShardId: start})
		if err != nil {
			return shards, err
		}
		if out.StreamDescription == nil {
			return shards, nil
		}
		shards = append(shards, out.StreamDescription.Shards...)
		start = out.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return shards, nil
		}
	}
}

// runShard delivers a shard's records in order until the shard is closed
// and drained, or ctx ends.
func (m *Mapping) runShard(ctx context.Context, shardID string, pos types.ShardIteratorType) {
	r := &shardReader{m: m, shardID: shardID, pos: pos, log: m.cfg.Log.With("shard", shardID)}
	if !r.newIterator(ctx) {
		return
	}
	for ctx.Err() == nil {
		gotNone := false
		if !r.ended && len(r.buf) < m.cfg.BatchSize {
			var step readStep
			if gotNone, step = r.read(ctx); step == readStop {
				return
			} else if step == readAgain {
				continue
			}
		}
		if r.batchDue() {
			r.deliver(ctx)
			continue
		}
		if r.ended {
			return
		}
		if gotNone || len(r.buf) > 0 {
			wait := m.cfg.PollInterval
			if len(r.buf) > 0 {
				wait = min(wait, m.cfg.BatchingWindow-m.now().Sub(r.first))
			}
			sleep(ctx, max(wait, time.Millisecond))
		}
	}
}

// shardReader is one shard's position: its iterator, the last record read
// (a new iterator starts after it) and the records buffered for a batch.
type shardReader struct {
	m        *Mapping
	shardID  string
	pos      types.ShardIteratorType
	log      *slog.Logger
	iter     *string
	lastRead string
	buf      []Record
	first    time.Time // when buf's first record was buffered
	ended    bool      // the shard is closed and read to its end
}

// newIterator takes an iterator after the last record read (at pos before
// any), retrying until it has one; false when the shard is gone or ctx
// ended.
func (r *shardReader) newIterator(ctx context.Context) bool {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(r.m.cfg.StreamARN), ShardId: aws.String(r.shardID), ShardIteratorType: r.pos}
	if r.lastRead != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(r.lastRead)
	}
	for ctx.Err() == nil {
		out, err := r.m.api.GetShardIterator(ctx, in)
		if err == nil {
			r.iter = out.ShardIterator
			return true
		}
		var gone *types.ResourceNotFoundException
		if errors.As(err, &gone) {
			r.log.Warn("streams: shard is gone", "error", err)
			return false
		}
		r.log.Warn("streams: getting a shard iterator failed; trying again", "error", err)
		sleep(ctx, r.m.cfg.PollInterval)
	}
	return false
}

// readStep is what the loop does after a read.
type readStep int

const (
	readOn    readStep = iota // go on to batching
	readAgain                 // read again at once (a new iterator, or after a failure's pause)
	readStop                  // stop: ctx ended or the shard is gone
)

// read makes one GetRecords call, buffering the records the filter passes;
// gotNone: the call answered none.
func (r *shardReader) read(ctx context.Context) (gotNone bool, step readStep) {
	out, err := r.m.api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: r.iter, Limit: aws.Int32(int32(min(r.m.cfg.BatchSize, 1000)))})
	if err != nil {
		if ctx.Err() != nil {
			return false, readStop
		}
		// An expired iterator, or one DynamoDB Local considers behind the
		// shard's trim horizon (it says so for an iterator taken on an
		// empty shard once records arrive), is replaced: after the last
		// record read, else from the trim horizon.
		var expired *types.ExpiredIteratorException
		var trimmed *types.TrimmedDataAccessException
		if errors.As(err, &expired) || errors.As(err, &trimmed) {
			if trimmed != nil {
				r.pos = types.ShardIteratorTypeTrimHorizon
				r.log.Debug("streams: iterator behind the trim horizon; taking a new one", "lastRead", r.lastRead)
			}
			if !r.newIterator(ctx) {
				return false, readStop
			}
			return false, readAgain
		}
		r.log.Warn("streams: reading the shard failed; trying again", "error", err)
		sleep(ctx, r.m.cfg.PollInterval)
		return false, readAgain
	}
	for _, rec := range out.Records {
		r.buffer(rec)
	}
	if out.NextShardIterator == nil {
		r.ended = true
	}
	r.iter = out.NextShardIterator
	return len(out.Records) == 0, readOn
}

// buffer converts and filters one stream record into the batch.
func (r *shardReader) buffer(sr types.Record) {
	rec, err := FromStream(sr, r.m.cfg.Region, r.m.cfg.StreamARN)
	if sr.Dynamodb != nil {
		r.lastRead = aws.ToString(sr.Dynamodb.SequenceNumber)
	}
	if err != nil {
		// Never dropped silently: a record we cannot convert is delivered
		// as far as it converted, and logged.
		r.log.Error("streams: record not fully converted", "sequenceNumber", r.lastRead, "error", err)
	}
	ok, err := r.m.cfg.Filter.Match(rec)
	if err != nil {
		r.log.Error("streams: filtering a record failed; delivering it", "sequenceNumber", r.lastRead, "error", err)
		ok = true
	}
	if !ok {
		return
	}
	if len(r.buf) == 0 {
		r.first = r.m.now()
	}
	r.buf = append(r.buf, rec)
}

// batchDue: the buffer is full, its window is over, or the shard ended
// with records left.
func (r *shardReader) batchDue() bool {
	n := len(r.buf)
	return n >= r.m.cfg.BatchSize || (n > 0 && r.m.now().Sub(r.first) >= r.m.cfg.BatchingWindow) || (r.ended && n > 0)
}

// deliver hands the function one batch, keeping the rest buffered.
func (r *shardReader) deliver(ctx context.Context) {
	n := min(len(r.buf), r.m.cfg.BatchSize)
	r.m.process(ctx, r.shardID, r.buf[:n])
	r.buf = append([]Record(nil), r.buf[n:]...)
	if len(r.buf) > 0 {
		r.first = r.m.now()
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

// String describes the mapping for logs.
func (m *Mapping) String() string {
	return fmt.Sprintf("%s <- %s", m.cfg.Function, m.cfg.StreamARN)
}
