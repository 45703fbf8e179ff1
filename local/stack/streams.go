package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gateway"
	"github.com/gamefabric-alloc/allocsvc/local/streams"
)

// StreamTuning are the local event source mappings' knobs; zero values
// take the streams package's short defaults.
type StreamTuning struct {
	PollInterval, RetryBackoff, DescribeInterval time.Duration
	// Off starts no event source mapping: the stack's writes then invoke
	// no stream-triggered function (make bench measures the allocate path
	// alone, and EventsFunction on its own).
	Off bool
}

// startStreams runs one event source mapping per DynamoDB event of every
// function, invoking it through its pool with its template timeout.
func (s *Stack) startStreams(refs map[string]string, tuning StreamTuning, log io.Writer) error {
	if tuning.Off {
		return nil
	}
	sources, err := s.Template.DynamoDBEventSources(refs)
	if err != nil {
		return err
	}
	api := s.DynamoDBStreams()
	logger := slog.New(slog.NewTextHandler(log, nil))
	for _, src := range sources {
		pool, ok := s.pools[src.FunctionLogicalID]
		if !ok {
			return fmt.Errorf("%s event %s: no such function", src.FunctionLogicalID, src.EventName)
		}
		arn, ok := s.Streams[src.TableLogicalID]
		if !ok {
			return fmt.Errorf("%s event %s: table %s has no stream (StreamSpecification)", src.FunctionLogicalID, src.EventName, src.TableLogicalID)
		}
		timeout, err := s.Template.FunctionTimeout(src.FunctionLogicalID)
		if err != nil {
			return err
		}
		cfg, err := s.MappingConfig(src.FunctionLogicalID, src.EventName, refs)
		if err != nil {
			return err
		}
		cfg.StreamARN = arn
		cfg.PollInterval, cfg.RetryBackoff, cfg.DescribeInterval = tuning.PollInterval, tuning.RetryBackoff, tuning.DescribeInterval
		cfg.Log = logger
		m, err := streams.Start(cfg, api, PoolInvoker(pool, timeout))
		if err != nil {
			return err
		}
		s.Mappings = append(s.Mappings, m)
		s.closers = append(s.closers, m.Stop)
	}
	return nil
}

// MappingConfig is the streams.Config of function fn's DynamoDB event
// event, from the template, with its on-failure destination in moto;
// StreamARN is the table's stream.
func (c *Components) MappingConfig(fn, event string, refs map[string]string) (streams.Config, error) {
	sources, err := c.Template.DynamoDBEventSources(refs)
	if err != nil {
		return streams.Config{}, err
	}
	for _, src := range sources {
		if src.FunctionLogicalID != fn || src.EventName != event {
			continue
		}
		filter, err := streams.CompileFilter(src.Filters)
		if err != nil {
			return streams.Config{}, fmt.Errorf("%s event %s FilterCriteria: %w", fn, event, err)
		}
		cfg := streams.Config{
			Function: fn, StreamARN: c.Streams[src.TableLogicalID],
			StartingPosition: src.StartingPosition, BatchSize: src.BatchSize, BatchingWindow: src.MaximumBatchingWindow,
			MaximumRetryAttempts: src.MaximumRetryAttempts, BisectBatchOnFunctionError: src.BisectBatchOnFunctionError,
			MaximumRecordAge: src.MaximumRecordAge, ReportBatchItemFailures: src.ReportBatchItemFailures, Filter: filter,
		}
		if src.OnFailureQueue != "" {
			url, ok := c.Queues[src.OnFailureQueue]
			if !ok {
				return cfg, fmt.Errorf("%s event %s: no queue %s", fn, event, src.OnFailureQueue)
			}
			cfg.OnFailure = streams.SQSDestination{Client: c.SQS(), QueueURL: url}
		}
		return cfg, nil
	}
	return streams.Config{}, fmt.Errorf("no DynamoDB event %s on %s", event, fn)
}

// PoolInvoker invokes a function's pool as a stream event source mapping
// does: synchronously, with the function's timeout; a function error, a
// timeout or a crash is a failed invocation.
func PoolInvoker(pool *gateway.Pool, timeout time.Duration) streams.Invoker {
	return streams.InvokerFunc(func(ctx context.Context, event []byte) ([]byte, error) {
		res, err := pool.Invoke(ctx, event, timeout)
		if err != nil {
			return nil, err
		}
		if res.FunctionError != nil {
			return res.Payload, res.FunctionError
		}
		return res.Payload, nil
	})
}
