package template

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// EventRule is an AWS::Events::Rule with an EventPattern whose targets are
// functions of the template, as CloudFormation would create it with refs.
type EventRule struct {
	LogicalID    string
	Name         string // "" when CloudFormation names it
	EventBusName string // "" is the account's default bus, where AWS services put their events
	Pattern      string // the EventPattern as JSON, evaluated
	Enabled      bool   // State is ENABLED, the default
	Targets      []RuleTarget
}

// RuleTarget is a rule's target: a function, which EventBridge invokes
// asynchronously with the event (the function's EventInvokeConfig then
// says how errors are retried). The target's own RetryPolicy and
// DeadLetterConfig cover EventBridge failing to hand the event over, which
// does not happen locally, so they are not read.
type RuleTarget struct {
	ID                string `cfn:"Id,required"`
	FunctionLogicalID string `cfn:"Arn,required" getatt:"Arn function"`
}

// EventRules returns the event-pattern rules of the template that
// CloudFormation would create with refs, in template order: a rule whose
// Condition is false is left out. A rule the local stack could not play
// faithfully (a schedule, a target that is no function of the template, a
// target that rewrites the event) is an error.
func (t *Template) EventRules(refs map[string]string) ([]EventRule, error) {
	r := resolver{t: t, refs: refs}
	return each(r, TypeEventsRule, "rule", r.eventRule)
}

func (r resolver) eventRule(res *resource) (EventRule, error) {
	props := struct {
		Name, EventBusName, State string
		ScheduleExpression        *yaml.Node
		Targets                   []struct {
			RuleTarget
			// A target that rewrites the event is refused.
			Input, InputPath, InputTransformer *yaml.Node
		}
	}{State: "ENABLED"}
	if err := r.decode(res.props, "", &props); err != nil {
		return EventRule{}, err
	}
	if props.ScheduleExpression != nil {
		return EventRule{}, fmt.Errorf("ScheduleExpression: schedules run locally as a function's Schedule event only")
	}
	rule := EventRule{LogicalID: res.id, Name: props.Name, EventBusName: props.EventBusName, Enabled: props.State == "ENABLED"}
	for i, tg := range props.Targets {
		if tg.Input != nil || tg.InputPath != nil || tg.InputTransformer != nil {
			return rule, fmt.Errorf("Targets[%d]: only targets that get the event as it is run locally", i)
		}
		rule.Targets = append(rule.Targets, tg.RuleTarget)
	}
	if rule.EventBusName == "default" {
		rule.EventBusName = ""
	}
	pattern, _, err := r.value(lookup(res.props, "EventPattern"), "EventPattern", 0)
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
	err = enc.Encode(pattern)
	rule.Pattern = strings.TrimSuffix(b.String(), "\n")
	return rule, err
}
