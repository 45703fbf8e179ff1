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
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/gamefabric-alloc/allocsvc/local/internal/esm"
)

// StreamsAPI is the part of *dynamodbstreams.Client a mapping uses.
type StreamsAPI interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// Invoker runs the function; Lambda retries a failed invocation.
type Invoker = esm.Invoker

// InvokerFunc adapts a function to Invoker.
type InvokerFunc = esm.InvokerFunc

// Destination is where the records a mapping sets aside go (SQSDestination).
type Destination = esm.Destination

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
	cfg   Config
	api   StreamsAPI
	fn    Invoker
	loops *esm.Loops
	now   func() time.Time
}

// Start polls the stream until Stop.
func Start(cfg Config, api StreamsAPI, fn Invoker) (*Mapping, error) {
	if cfg.StreamARN == "" {
		return nil, errors.New("streams: no stream ARN")
	}
	cfg.Region = cmp.Or(cfg.Region, "us-east-1")
	cfg.FunctionARN = cmp.Or(cfg.FunctionARN, "arn:aws:lambda:"+cfg.Region+":123456789012:function:"+cfg.Function)
	cfg.StartingPosition = cmp.Or(cfg.StartingPosition, string(types.ShardIteratorTypeTrimHorizon))
	cfg.BatchSize = esm.Or(cfg.BatchSize, 100)
	cfg.PollInterval = esm.Or(cfg.PollInterval, 250*time.Millisecond)
	cfg.RetryBackoff = esm.Or(cfg.RetryBackoff, 200*time.Millisecond)
	cfg.DescribeInterval = esm.Or(cfg.DescribeInterval, 2*time.Second)
	cfg.Log = esm.Logger(cfg.Log, "function", cfg.Function, "stream", cfg.StreamARN)
	m := &Mapping{cfg: cfg, api: api, fn: fn, loops: esm.NewLoops(), now: time.Now}
	m.loops.Go(m.run)
	return m, nil
}

// Stop ends polling and waits for the batch in flight, if any, to end
// (its invocation is cancelled).
func (m *Mapping) Stop() error { return m.loops.Stop() }

// run discovers shards and runs one worker per shard whose parent is done.
func (m *Mapping) run(ctx context.Context) {
	started, finished := map[string]bool{}, map[string]bool{}
	finishedCh := make(chan string, 16)
	first := true
	for {
		shards, err := describe(ctx, m.api, m.cfg.StreamARN)
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
			m.loops.Go(func(ctx context.Context) {
				m.runShard(ctx, id, pos)
				select {
				case finishedCh <- id:
				case <-ctx.Done():
				}
			})
		}
		first = first && err != nil
		select {
		case <-ctx.Done():
			return
		case id := <-finishedCh:
			finished[id] = true
		case <-time.After(m.cfg.DescribeInterval):
		}
	}
}

// describe lists every shard of the stream, page after page.
func describe(ctx context.Context, api StreamsAPI, streamARN string) ([]types.Shard, error) {
	var shards []types.Shard
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(streamARN)}
	for {
		out, err := api.DescribeStream(ctx, in)
		if err != nil || out.StreamDescription == nil {
			return shards, err
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if in.ExclusiveStartShardId = out.StreamDescription.LastEvaluatedShardId; in.ExclusiveStartShardId == nil {
			return shards, nil
		}
	}
}

// shardReader is one shard's position: its iterator, the last record read
// (a new iterator starts after it) and the records buffered for a batch.
type shardReader struct {
	*Mapping
	shardID  string
	pos      types.ShardIteratorType
	log      *slog.Logger
	iter     *string // nil: take a new one
	lastRead string
	buf      []Record
	first    time.Time // when buf's first record was buffered
	ended    bool      // the shard is closed and read to its end
}

// runShard delivers a shard's records in order until the shard is closed
// and drained, or ctx ends.
func (m *Mapping) runShard(ctx context.Context, shardID string, pos types.ShardIteratorType) {
	r := &shardReader{Mapping: m, shardID: shardID, pos: pos, log: m.cfg.Log.With("shard", shardID)}
	for ctx.Err() == nil {
		if r.iter == nil && !r.ended {
			if gone := r.newIterator(ctx); gone {
				return
			}
			continue
		}
		idle := false
		if !r.ended && len(r.buf) < m.cfg.BatchSize {
			idle = r.read(ctx)
		}
		n := len(r.buf)
		if n >= m.cfg.BatchSize || (n > 0 && (r.ended || m.now().Sub(r.first) >= m.cfg.BatchingWindow)) {
			r.deliver(ctx)
			continue
		}
		if r.ended {
			return
		}
		if idle || n > 0 {
			wait := m.cfg.PollInterval
			if n > 0 {
				wait = min(wait, m.cfg.BatchingWindow-m.now().Sub(r.first))
			}
			esm.Sleep(ctx, max(wait, time.Millisecond))
		}
	}
}

// newIterator takes an iterator after the last record read (at pos before
// any); gone: the shard is.
func (r *shardReader) newIterator(ctx context.Context) (gone bool) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(r.cfg.StreamARN), ShardId: aws.String(r.shardID), ShardIteratorType: r.pos}
	if r.lastRead != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(r.lastRead)
	}
	out, err := r.api.GetShardIterator(ctx, in)
	var notFound *types.ResourceNotFoundException
	switch {
	case errors.As(err, &notFound):
		r.log.Warn("streams: shard is gone", "error", err)
		return true
	case err != nil && ctx.Err() == nil:
		r.log.Warn("streams: getting a shard iterator failed; trying again", "error", err)
		esm.Sleep(ctx, r.cfg.PollInterval)
	case err == nil:
		r.iter, r.ended = out.ShardIterator, out.ShardIterator == nil
	}
	return false
}

// read makes one GetRecords call, buffering the records the filter passes;
// idle: it read none, or failed.
func (r *shardReader) read(ctx context.Context) (idle bool) {
	out, err := r.api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: r.iter, Limit: aws.Int32(int32(min(r.cfg.BatchSize, 1000)))})
	var expired *types.ExpiredIteratorException
	var trimmed *types.TrimmedDataAccessException
	switch {
	case ctx.Err() != nil:
		return false
	case errors.As(err, &expired) || errors.As(err, &trimmed):
		// An expired iterator, or one DynamoDB Local considers behind the
		// shard's trim horizon (it says so for an iterator taken on an
		// empty shard once records arrive), is replaced: after the last
		// record read, else from the trim horizon.
		if trimmed != nil {
			r.pos = types.ShardIteratorTypeTrimHorizon
			r.log.Debug("streams: iterator behind the trim horizon; taking a new one", "lastRead", r.lastRead)
		}
		r.iter = nil
		return false
	case err != nil:
		r.log.Warn("streams: reading the shard failed; trying again", "error", err)
		return true
	}
	for _, rec := range out.Records {
		r.buffer(rec)
	}
	r.iter, r.ended = out.NextShardIterator, out.NextShardIterator == nil
	return len(out.Records) == 0
}

// buffer converts and filters one stream record into the batch.
func (r *shardReader) buffer(sr types.Record) {
	rec, err := FromStream(sr, r.cfg.Region, r.cfg.StreamARN)
	if sr.Dynamodb != nil {
		r.lastRead = aws.ToString(sr.Dynamodb.SequenceNumber)
	}
	if err != nil {
		// Never dropped silently: a record we cannot convert is delivered
		// as far as it converted, and logged.
		r.log.Error("streams: record not fully converted", "sequenceNumber", r.lastRead, "error", err)
	}
	ok, err := r.cfg.Filter.Match(rec)
	if err != nil {
		r.log.Error("streams: filtering a record failed; delivering it", "sequenceNumber", r.lastRead, "error", err)
	}
	if !ok && err == nil {
		return
	}
	if len(r.buf) == 0 {
		r.first = r.now()
	}
	r.buf = append(r.buf, rec)
}

// deliver hands the function one batch, keeping the rest buffered.
func (r *shardReader) deliver(ctx context.Context) {
	n := min(len(r.buf), r.cfg.BatchSize)
	r.process(ctx, r.shardID, r.buf[:n])
	r.buf = append([]Record(nil), r.buf[n:]...)
	r.first = r.now()
}

// String describes the mapping for logs.
func (m *Mapping) String() string {
	return fmt.Sprintf("%s <- %s", m.cfg.Function, m.cfg.StreamARN)
}
