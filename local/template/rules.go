package template

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// TypeEventsRule is an EventBridge rule.
const TypeEventsRule = "AWS::Events::Rule"

// EventRule is an AWS::Events::Rule with an EventPattern whose targets are
// functions of the template, as CloudFormation would create it with refs.
type EventRule struct {
	LogicalID string
	// Name is the rule's Name, or "" when CloudFormation names it.
	Name string
	// EventBusName is EventBusName evaluated; "" is the account's default
	// bus (where AWS services such as GameLift put their events).
	EventBusName string
	// Pattern is the EventPattern as JSON, evaluated: Fn::If takes its
	// branch, and a key whose value is AWS::NoValue is left out.
	Pattern string
	Enabled bool // State is ENABLED, the default
	Targets []RuleTarget
}

// RuleTarget is a rule's target: a function, which EventBridge invokes
// asynchronously with the event (the function's EventInvokeConfig then
// says how errors are retried). The target's own RetryPolicy and
// DeadLetterConfig cover EventBridge failing to hand the event over, which
// does not happen locally, so they are not read.
type RuleTarget struct {
	ID                string
	FunctionLogicalID string
}

// EventRules returns the event-pattern rules of the template that
// CloudFormation would create with refs, in template order: a rule whose
// Condition is false is left out. A rule the local stack could not play
// faithfully (a schedule, a target that is no function of the template, a
// target that rewrites the event) is an error.
func (t *Template) EventRules(refs map[string]string) ([]EventRule, error) {
	r := resolver{t: t, refs: refs}
	var out []EventRule
	for i := range t.resources {
		res := &t.resources[i]
		if res.typ != TypeEventsRule {
			continue
		}
		if created, err := r.exists(res); err != nil || !created {
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", res.id, err)
			}
			continue
		}
		rule, err := r.eventRule(res.id, res.props)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", res.id, err)
		}
		out = append(out, rule)
	}
	return out, nil
}

func (r resolver) eventRule(id string, p *yaml.Node) (EventRule, error) {
	rule := EventRule{LogicalID: id, Enabled: true}
	var err error
	if lookup(p, "ScheduleExpression") != nil {
		return rule, fmt.Errorf("ScheduleExpression: schedules run locally as a function's Schedule event only")
	}
	for key, into := range map[string]*string{"Name": &rule.Name, "EventBusName": &rule.EventBusName} {
		if n := lookup(p, key); n != nil {
			if *into, err = r.str(n, key); err != nil {
				return rule, err
			}
		}
	}
	if rule.EventBusName == "default" {
		rule.EventBusName = ""
	}
	if n := lookup(p, "State"); n != nil {
		state, err := r.str(n, "State")
		if err != nil {
			return rule, err
		}
		rule.Enabled = state == "ENABLED"
	}
	pattern, _, err := r.value(lookup(p, "EventPattern"), "EventPattern", 0)
	if err != nil {
		return rule, err
	}
	if _, isObject := pattern.(map[string]any); !isObject {
		return rule, fmt.Errorf("EventPattern must be an object")
	}
	// As written: ">" in a numeric match stays ">", not \u003e.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(pattern); err != nil {
		return rule, fmt.Errorf("EventPattern: %w", err)
	}
	rule.Pattern = strings.TrimSuffix(b.String(), "\n")
	rule.Targets, err = r.ruleTargets(lookup(p, "Targets"))
	return rule, err
}

func (r resolver) ruleTargets(n *yaml.Node) ([]RuleTarget, error) {
	targets, err := r.list(n, "Targets")
	if err != nil {
		return nil, err
	}
	var out []RuleTarget
	for i, tg := range targets {
		what := fmt.Sprintf("Targets[%d]", i)
		for _, key := range []string{"Input", "InputPath", "InputTransformer"} {
			if lookup(tg, key) != nil {
				return nil, fmt.Errorf("%s.%s: only targets that get the event as it is run locally", what, key)
			}
		}
		id, err := r.str(lookup(tg, "Id"), what+".Id")
		if err != nil {
			return nil, err
		}
		fn, err := r.getAttOf(lookup(tg, "Arn"), what+".Arn", "Arn", TypeServerlessFunction)
		if err != nil {
			fn, err = r.getAttOf(lookup(tg, "Arn"), what+".Arn", "Arn", TypeLambdaFunction)
		}
		if err != nil {
			return nil, fmt.Errorf("%w (only function targets run locally)", err)
		}
		out = append(out, RuleTarget{ID: id, FunctionLogicalID: fn})
	}
	return out, nil
}

// EventInvokeConfig is how Lambda handles a function's asynchronous
// invocations (a SAM function's EventInvokeConfig), with Lambda's defaults
// where the template leaves a value out.
type EventInvokeConfig struct {
	// MaximumRetryAttempts after a function error: 0 to 2, default 2.
	MaximumRetryAttempts int
	// MaximumEventAge is MaximumEventAgeInSeconds: 60 s to 6 h, the default.
	MaximumEventAge time.Duration
	// OnFailureQueue is the logical ID of the SQS queue of
	// DestinationConfig.OnFailure, or "".
	OnFailureQueue string
}

// EventInvokeConfig returns a function's EventInvokeConfig, evaluated like
// FunctionEnv.
func (t *Template) EventInvokeConfig(logicalID string, refs map[string]string) (EventInvokeConfig, error) {
	cfg := EventInvokeConfig{MaximumRetryAttempts: 2, MaximumEventAge: 6 * time.Hour}
	res, ok := t.byID[logicalID]
	if !ok || res.typ != TypeServerlessFunction && res.typ != TypeLambdaFunction {
		return cfg, fmt.Errorf("no function %s in the template", logicalID)
	}
	r := resolver{t: t, refs: refs}
	p, err := r.object(lookup(res.props, "EventInvokeConfig"), logicalID+".EventInvokeConfig")
	if err != nil || p == nil {
		return cfg, err
	}
	if v, ok, err := r.intIn(p, "MaximumRetryAttempts", 0, 2); err != nil {
		return cfg, fmt.Errorf("%s.EventInvokeConfig.%w", logicalID, err)
	} else if ok {
		cfg.MaximumRetryAttempts = int(v)
	}
	if v, ok, err := r.intIn(p, "MaximumEventAgeInSeconds", 60, 21600); err != nil {
		return cfg, fmt.Errorf("%s.EventInvokeConfig.%w", logicalID, err)
	} else if ok {
		cfg.MaximumEventAge = time.Duration(v) * time.Second
	}
	dest, err := r.object(lookup(p, "DestinationConfig"), "DestinationConfig")
	if err == nil && lookup(dest, "OnSuccess") != nil {
		err = fmt.Errorf("DestinationConfig.OnSuccess: not run locally")
	}
	if err == nil {
		cfg.OnFailureQueue, err = r.onFailureQueue(dest)
	}
	if err != nil {
		return cfg, fmt.Errorf("%s.EventInvokeConfig: %w", logicalID, err)
	}
	return cfg, nil
}

// onFailureQueue reads DestinationConfig.OnFailure (an SQS queue of the
// template) and returns the queue's logical ID, "" without one.
func (r resolver) onFailureQueue(dest *yaml.Node) (string, error) {
	onFailure, err := r.object(lookup(dest, "OnFailure"), "DestinationConfig.OnFailure")
	if err != nil || onFailure == nil {
		return "", err
	}
	if n := lookup(onFailure, "Type"); n != nil {
		if typ, err := r.str(n, "DestinationConfig.OnFailure.Type"); err != nil || typ != "SQS" {
			return "", fmt.Errorf("DestinationConfig.OnFailure.Type %q: only SQS runs locally (%v)", typ, err)
		}
	}
	return r.getAttOf(lookup(onFailure, "Destination"), "DestinationConfig.OnFailure.Destination", "Arn", TypeSQSQueue)
}
