package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/local/asyncinvoke"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/streams"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// RuleTuning are the knobs of the template's EventBridge rules, locally.
type RuleTuning struct {
	// RetryDelay is the wait before an asynchronous invocation's first
	// retry, doubled before the second (asyncinvoke's default when 0).
	RetryDelay time.Duration
	// WaitTime is one receive's long poll on a rule's queue (1 s when 0).
	WaitTime time.Duration
	// Observe, when set, hears what became of every event a rule
	// delivered to a function.
	Observe func(function string, o asyncinvoke.Outcome)
	// Off creates no rule: events on the buses reach no function.
	Off bool
}

// RuleInvoker is how a rule's target function is invoked, and how many
// of its events may be handled at once.
type RuleInvoker func(function string) (fn asyncinvoke.Invoker, concurrency int, err error)

// The default bus, where AWS services (GameLift's FlexMatch) put events.
const defaultBus = "default"

// StartRules creates the template's EventBridge rules that CloudFormation
// would create with refs (template.EventRules: conditions evaluated, so
// the local parameter FlexMatchIntegration=true makes MatchmakingRule) in
// moto, on their buses, each with the pattern as evaluated. A function
// target becomes an SQS queue standing for Lambda's event queue, and a
// Poller invoking the function asynchronously from it, with the retries
// and on-failure destination of the function's EventInvokeConfig. On an
// error the pollers already started are stopped.
func (c *Components) StartRules(ctx context.Context, refs map[string]string, invoker RuleInvoker, tuning RuleTuning, log io.Writer) (pollers []*asyncinvoke.Poller, err error) {
	defer func() {
		if err != nil {
			for _, p := range pollers {
				_ = p.Stop()
			}
			pollers = nil
		}
	}()
	if tuning.Off {
		return nil, nil
	}
	rules, err := c.Template.EventRules(refs)
	if err != nil {
		return nil, err
	}
	c.Rules = rules
	logger := slog.New(slog.NewTextHandler(log, nil))
	for _, rule := range rules {
		started, err := c.startRule(ctx, rule, refs, invoker, tuning, logger)
		pollers = append(pollers, started...)
		if err != nil {
			return pollers, fmt.Errorf("rule %s: %w", rule.LogicalID, err)
		}
	}
	return pollers, nil
}

// startRule puts the rule on its bus with one SQS target per function
// target, and starts their pollers.
func (c *Components) startRule(ctx context.Context, rule template.EventRule, refs map[string]string, invoker RuleInvoker, tuning RuleTuning, log *slog.Logger) ([]*asyncinvoke.Poller, error) {
	bus, name, state := rule.EventBusName, rule.Name, ebtypes.RuleStateEnabled
	if bus == "" {
		bus = defaultBus
	}
	if name == "" {
		name = "local-" + rule.LogicalID
	}
	if !rule.Enabled {
		state = ebtypes.RuleStateDisabled
	}
	eb, q := c.EventBridge(), c.SQS()
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventBusName: aws.String(bus),
		EventPattern: aws.String(rule.Pattern), State: state}); err != nil {
		return nil, err
	}
	var pollers []*asyncinvoke.Poller
	for _, tg := range rule.Targets {
		url, arn, err := createQueue(ctx, q, ruleQueueName(rule.LogicalID, tg.ID), nil)
		if err != nil {
			return pollers, err
		}
		out, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name), EventBusName: aws.String(bus),
			Targets: []ebtypes.Target{ebTarget(tg.ID, arn)}})
		if err == nil && out.FailedEntryCount > 0 {
			err = fmt.Errorf("target %s refused", tg.ID)
		}
		if err != nil {
			return pollers, err
		}
		p, err := c.startTarget(tg.FunctionLogicalID, url, refs, invoker, tuning, log)
		if err != nil {
			return pollers, fmt.Errorf("target %s: %w", tg.ID, err)
		}
		pollers = append(pollers, p)
	}
	return pollers, nil
}

// startTarget polls a rule's queue for function fn, invoking it as
// Lambda invokes an asynchronous event (its EventInvokeConfig).
func (c *Components) startTarget(fn, queueURL string, refs map[string]string, invoker RuleInvoker, tuning RuleTuning, log *slog.Logger) (*asyncinvoke.Poller, error) {
	inv, err := c.Template.EventInvokeConfig(fn, refs)
	if err != nil {
		return nil, err
	}
	cfg := asyncinvoke.Config{Function: fn, FunctionARN: FunctionARN(fn), MaximumRetryAttempts: inv.MaximumRetryAttempts,
		MaximumEventAge: inv.MaximumEventAge, RetryDelay: tuning.RetryDelay, Log: log}
	if inv.OnFailureQueue != "" {
		url, ok := c.Queues[inv.OnFailureQueue]
		if !ok {
			return nil, fmt.Errorf("%s's on-failure destination: no queue %s", fn, inv.OnFailureQueue)
		}
		cfg.OnFailure = streams.SQSDestination{Client: c.SQS(), QueueURL: url}
	}
	if tuning.Observe != nil {
		cfg.Done = func(o asyncinvoke.Outcome) { tuning.Observe(fn, o) }
	}
	target, concurrency, err := invoker(fn)
	if err != nil {
		return nil, err
	}
	return asyncinvoke.Start(cfg, asyncinvoke.Queue{URL: queueURL, Concurrency: concurrency, WaitTime: tuning.WaitTime}, c.SQS(), target)
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

// startRules plays the template's rules with the functions' sandboxes,
// each target taking as many events at once as its function has
// sandboxes.
func (s *Stack) startRules(ctx context.Context, refs map[string]string, tuning RuleTuning, sandboxes int, log io.Writer) error {
	invoker := func(fn string) (asyncinvoke.Invoker, int, error) {
		pool, ok := s.pools[fn]
		if !ok {
			return nil, 0, fmt.Errorf("no function %s", fn)
		}
		timeout, err := s.Template.FunctionTimeout(fn)
		return PoolInvoker(pool, timeout), sandboxes, err
	}
	pollers, err := s.StartRules(ctx, refs, invoker, tuning, log)
	for _, p := range pollers {
		s.closers = append(s.closers, p.Stop)
	}
	return err
}
