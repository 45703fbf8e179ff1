package stack

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/local/asyncinvoke"
	"github.com/gamefabric-alloc/allocsvc/local/gateway"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/sqssource"
	"github.com/gamefabric-alloc/allocsvc/local/streams"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// StreamTuning.Off starts no DynamoDB stream event source mapping (make
// bench measures the allocate path alone, and EventsFunction on its own).
type StreamTuning struct{ Off bool }

// RuleTuning are the knobs of the template's EventBridge rules, locally.
type RuleTuning struct {
	RetryDelay time.Duration // before an asynchronous invocation's first retry (asyncinvoke's default when 0)
	WaitTime   time.Duration // one receive's long poll on a rule's queue (1 s when 0)
	// Observe, when set, hears what became of every event a rule delivered.
	Observe func(function string, o asyncinvoke.Outcome)
	Off     bool // no rule: events on the buses reach no function
}

// RuleInvoker is how a rule's target function is invoked, and how many
// of its events may be handled at once.
type RuleInvoker func(function string) (fn asyncinvoke.Invoker, concurrency int, err error)

// startEventSources feeds the functions the tables' streams, the queues and
// the EventBridge rules' events, with as many batches (or events) in flight
// as a function has sandboxes.
func (s *Stack) startEventSources(ctx context.Context, cfg Config, o Options) error {
	log := slog.New(slog.NewTextHandler(o.Log, nil))
	if err := s.startStreams(o.Streams, log); err != nil {
		return fmt.Errorf("DynamoDB stream event sources: %w", err)
	}
	if err := s.startQueueSources(cfg.API.Concurrency, log); err != nil {
		return fmt.Errorf("SQS event sources: %w", err)
	}
	pollers, err := s.StartRules(ctx, s.Refs, func(fn string) (asyncinvoke.Invoker, int, error) {
		inv, err := s.invoker(fn)
		return inv, cfg.API.Concurrency, err
	}, o.Rules, o.Log)
	for _, p := range pollers {
		s.closers = append(s.closers, p.Stop)
	}
	if err != nil {
		return fmt.Errorf("EventBridge rules: %w", err)
	}
	return nil
}

// invoker invokes fn's sandboxes as an event source mapping does:
// synchronously, with the function's timeout; a function error, a timeout
// or a crash is a failed invocation.
func (s *Stack) invoker(fn string) (streams.InvokerFunc, error) {
	pool, ok := s.pools[fn]
	if !ok {
		return nil, fmt.Errorf("no function %s", fn)
	}
	timeout, err := s.Template.FunctionTimeout(fn)
	return func(ctx context.Context, event []byte) ([]byte, error) { return invoke(ctx, pool, event, timeout) }, err
}

// startMapping starts a mapping of fn's events with begin, given fn's
// invoker, adds it to into, and stops it with the stack.
func startMapping[M interface{ Stop() error }](s *Stack, fn string, into *[]M, begin func(streams.InvokerFunc) (M, error)) error {
	inv, err := s.invoker(fn)
	if err != nil {
		return err
	}
	m, err := begin(inv)
	if err != nil {
		return err
	}
	*into = append(*into, m)
	s.closers = append(s.closers, m.Stop)
	return nil
}

// invoke runs the pool's function once; a function error comes with its
// payload.
func invoke(ctx context.Context, pool *gateway.Pool, event []byte, timeout time.Duration) (json.RawMessage, error) {
	res, err := pool.Invoke(ctx, event, timeout)
	switch {
	case err != nil:
		return nil, err
	case res.FunctionError != nil:
		return res.Payload, res.FunctionError
	}
	return res.Payload, nil
}

// startStreams runs one mapping per DynamoDB event of every function.
func (s *Stack) startStreams(tuning StreamTuning, log *slog.Logger) error {
	if tuning.Off {
		return nil
	}
	sources, err := s.Template.DynamoDBEventSources(s.Refs)
	if err != nil {
		return err
	}
	for _, src := range sources {
		cfg, err := s.mappingConfig(src)
		if err != nil {
			return err
		}
		cfg.Log = log
		err = startMapping(s, src.FunctionLogicalID, &s.Mappings, func(inv streams.InvokerFunc) (*streams.Mapping, error) {
			return streams.Start(cfg, s.DynamoDBStreams(), inv)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// MappingConfig is the streams.Config of function fn's DynamoDB event
// event, on its table's stream, with its on-failure destination in moto.
func (c *Components) MappingConfig(fn, event string, refs map[string]string) (streams.Config, error) {
	sources, err := c.Template.DynamoDBEventSources(refs)
	if err != nil {
		return streams.Config{}, err
	}
	for _, src := range sources {
		if src.FunctionLogicalID == fn && src.EventName == event {
			return c.mappingConfig(src)
		}
	}
	return streams.Config{}, fmt.Errorf("no DynamoDB event %s on %s", event, fn)
}

func (c *Components) mappingConfig(src template.DynamoDBEventSource) (streams.Config, error) {
	fn, event := src.FunctionLogicalID, src.EventName
	arn, ok := c.Streams[src.TableLogicalID]
	if !ok {
		return streams.Config{}, fmt.Errorf("%s event %s: table %s has no stream (StreamSpecification)", fn, event, src.TableLogicalID)
	}
	filter, err := streams.CompileFilter(src.Filters)
	if err != nil {
		return streams.Config{}, fmt.Errorf("%s event %s FilterCriteria: %w", fn, event, err)
	}
	cfg := streams.Config{
		Function: fn, StreamARN: arn,
		StartingPosition: src.StartingPosition, BatchSize: src.BatchSize, BatchingWindow: src.MaximumBatchingWindow,
		MaximumRetryAttempts: src.MaximumRetryAttempts, BisectBatchOnFunctionError: src.BisectBatchOnFunctionError,
		MaximumRecordAge: src.MaximumRecordAge, ReportBatchItemFailures: src.ReportBatchItemFailures, Filter: filter,
	}
	cfg.OnFailure, err = c.onFailure(src.OnFailureQueue)
	return cfg, err
}

// onFailure is the template queue logicalID in moto, nil for "".
func (c *Components) onFailure(logicalID string) (streams.Destination, error) {
	if logicalID == "" {
		return nil, nil
	}
	url, ok := c.Queues[logicalID]
	if !ok {
		return nil, fmt.Errorf("no queue %s for the on-failure destination", logicalID)
	}
	return streams.SQSDestination{Client: c.SQS(), QueueURL: url}, nil
}

// QueueSourceConfig is the sqssource.Config of an SQS event, on its queue
// in moto.
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
// function, with up to pollers batches in flight (capped by ScalingConfig's
// MaximumConcurrency).
func (s *Stack) startQueueSources(pollers int, log *slog.Logger) error {
	sources, err := s.Template.SQSEventSources(s.Refs)
	if err != nil {
		return err
	}
	for _, src := range sources {
		if !src.Enabled {
			continue // Lambda polls no disabled mapping
		}
		cfg, err := s.QueueSourceConfig(src)
		if err != nil {
			return err
		}
		cfg.Pollers, cfg.Log = pollers, log
		if src.MaximumConcurrency > 0 {
			cfg.Pollers = min(pollers, src.MaximumConcurrency)
		}
		err = startMapping(s, src.FunctionLogicalID, &s.QueueSources, func(inv streams.InvokerFunc) (*sqssource.Mapping, error) {
			return sqssource.Start(cfg, s.SQS(), inv)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// StartRules creates in moto the template's EventBridge rules that
// CloudFormation would create with refs (FlexMatchIntegration=true makes
// MatchmakingRule). A function target becomes an SQS queue standing for
// Lambda's event queue, and a Poller invoking the function from it as
// Lambda invokes an asynchronous event (its EventInvokeConfig). The
// pollers started are returned even with an error, for the caller to stop.
func (c *Components) StartRules(ctx context.Context, refs map[string]string, invoker RuleInvoker, tuning RuleTuning, log io.Writer) (pollers []*asyncinvoke.Poller, err error) {
	if tuning.Off {
		return nil, nil
	}
	if c.Rules, err = c.Template.EventRules(refs); err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(log, nil))
	for _, rule := range c.Rules {
		for _, tg := range rule.Targets {
			p, err := c.startTarget(ctx, rule, tg, refs, invoker, tuning, logger)
			if err != nil {
				return pollers, fmt.Errorf("rule %s target %s: %w", rule.LogicalID, tg.ID, err)
			}
			pollers = append(pollers, p)
		}
	}
	return pollers, nil
}

// startTarget puts the rule on its bus (AWS services' own events are on the
// default one) with the target's queue, and polls the queue.
func (c *Components) startTarget(ctx context.Context, rule template.EventRule, tg template.RuleTarget, refs map[string]string,
	invoker RuleInvoker, tuning RuleTuning, log *slog.Logger) (*asyncinvoke.Poller, error) {
	bus, name, state := cmp.Or(rule.EventBusName, defaultBus), cmp.Or(rule.Name, "local-"+rule.LogicalID), ebtypes.RuleStateEnabled
	if !rule.Enabled {
		state = ebtypes.RuleStateDisabled
	}
	eb := c.EventBridge()
	_, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventBusName: aws.String(bus),
		EventPattern: aws.String(rule.Pattern), State: state})
	if err != nil {
		return nil, err
	}
	url, arn, err := createQueue(ctx, c.SQS(), ruleQueueName(rule.LogicalID, tg.ID), nil)
	if err == nil {
		err = putTargets(ctx, eb, bus, name, ebtypes.Target{Id: aws.String(tg.ID), Arn: aws.String(arn)})
	}
	inv, ierr := c.Template.EventInvokeConfig(tg.FunctionLogicalID, refs)
	if err = cmp.Or(err, ierr); err != nil {
		return nil, err
	}
	fn := tg.FunctionLogicalID
	cfg := asyncinvoke.Config{Function: fn, FunctionARN: FunctionARN(fn), MaximumRetryAttempts: inv.MaximumRetryAttempts,
		MaximumEventAge: inv.MaximumEventAge, RetryDelay: tuning.RetryDelay, Log: log}
	if cfg.OnFailure, err = c.onFailure(inv.OnFailureQueue); err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	if tuning.Observe != nil {
		cfg.Done = func(o asyncinvoke.Outcome) { tuning.Observe(fn, o) }
	}
	target, concurrency, err := invoker(fn)
	if err != nil {
		return nil, err
	}
	return asyncinvoke.Start(cfg, asyncinvoke.Queue{URL: url, Concurrency: concurrency, WaitTime: tuning.WaitTime}, c.SQS(), target)
}

// FunctionARN is a function's ARN locally (its name is its logical ID).
func FunctionARN(logicalID string) string {
	return "arn:aws:lambda:" + harness.Region + ":" + motoAccount + ":function:" + logicalID
}

var notInQueueName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ruleQueueName names the queue of a rule's target: SQS allows 80 of
// [A-Za-z0-9_-], a target id may have dots.
func ruleQueueName(rule, target string) string {
	name := notInQueueName.ReplaceAllString("local-rule-"+rule+"-"+target, "-")
	return name[:min(len(name), 80)]
}
