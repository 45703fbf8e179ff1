package template

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rulesSample is the FlexMatch front door's rule as the contract
// (/work/contract/issue24.md) writes it, with a rule on a custom bus and
// one whose condition is never true besides.
const rulesSample = `
Parameters:
  FlexMatchIntegration: {Type: String, Default: "false"}
  MatchmakingConfigurationArns: {Type: CommaDelimitedList, Default: ""}
  Stage: {Type: String, Default: dev}
Conditions:
  FlexMatchEnabled: !Equals [!Ref FlexMatchIntegration, "true"]
  HasMatchmakingConfigurationArns: !Not [!Equals [!Join ["", !Ref MatchmakingConfigurationArns], ""]]
  Never: !And [!Condition FlexMatchEnabled, !Not [!Condition FlexMatchEnabled]]
  Either: {"Fn::Or": [{"Condition": "FlexMatchEnabled"}, {"Fn::Equals": [!Ref Stage, prod]}]}
Resources:
  Bus:
    Type: AWS::Events::EventBus
    Properties: {Name: !Sub "${AWS::StackName}-bus"}
  DeadLetters:
    Type: AWS::SQS::Queue
  MatchmakingFunction:
    Type: AWS::Serverless::Function
    Properties:
      EventInvokeConfig:
        MaximumRetryAttempts: 2
        MaximumEventAgeInSeconds: 3600
        DestinationConfig:
          OnFailure: {Type: SQS, Destination: !GetAtt DeadLetters.Arn}
  PlainFunction:
    Type: AWS::Serverless::Function
  MatchmakingRule:
    Type: AWS::Events::Rule
    Condition: FlexMatchEnabled
    Properties:
      EventPattern:
        source: [aws.gamelift]
        detail-type: [GameLift Matchmaking Event]
        detail:
          type: [MatchmakingSucceeded]
          players: [{numeric: [">", 0]}]
        resources: !If [HasMatchmakingConfigurationArns, !Ref MatchmakingConfigurationArns, !Ref AWS::NoValue]
      Targets:
        - Id: MatchmakingFunction
          Arn: !GetAtt MatchmakingFunction.Arn
          RetryPolicy: {MaximumRetryAttempts: 185}
          DeadLetterConfig: {Arn: !GetAtt DeadLetters.Arn}
  BusRule:
    Type: AWS::Events::Rule
    Condition: Either
    Properties:
      Name: bus-rule
      EventBusName: !Ref Bus
      State: DISABLED
      EventPattern: {source: [!Sub "${Stage}.app"]}
      Targets: [{Id: plain, Arn: !GetAtt PlainFunction.Arn}]
  NeverRule:
    Type: AWS::Events::Rule
    Condition: Never
    Properties:
      EventPattern: {source: [x]}
`

func TestEventRulesFollowConditionsAndResolveThePattern(t *testing.T) {
	tpl, err := Parse([]byte(rulesSample))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := tpl.EventRules(nil)
	if err != nil || len(rules) != 0 {
		t.Fatalf("with the defaults (FlexMatch off, stage dev) = %+v, %v; want no rule", rules, err)
	}

	refs := map[string]string{"FlexMatchIntegration": "true", "Bus": "local-bus"}
	rules, err = tpl.EventRules(refs)
	if err != nil || len(rules) != 2 {
		t.Fatalf("FlexMatch on = %+v, %v; want MatchmakingRule and BusRule", rules, err)
	}
	mm := rules[0]
	wantPattern := `{"detail":{"players":[{"numeric":[">",0]}],"type":["MatchmakingSucceeded"]},"detail-type":["GameLift Matchmaking Event"],"source":["aws.gamelift"]}`
	if mm.LogicalID != "MatchmakingRule" || mm.EventBusName != "" || !mm.Enabled || mm.Pattern != wantPattern ||
		!reflect.DeepEqual(mm.Targets, []RuleTarget{{ID: "MatchmakingFunction", FunctionLogicalID: "MatchmakingFunction"}}) {
		t.Errorf("MatchmakingRule without ARNs = %+v\nwant the default bus and pattern %s (no resources key)", mm, wantPattern)
	}
	bus := rules[1]
	if bus.Name != "bus-rule" || bus.EventBusName != "local-bus" || bus.Enabled || bus.Pattern != `{"source":["dev.app"]}` {
		t.Errorf("BusRule = %+v", bus)
	}

	refs["MatchmakingConfigurationArns"] = "arn:aws:gamelift:us-east-1:123456789012:matchmakingconfiguration/a,arn:aws:gamelift:us-east-1:123456789012:matchmakingconfiguration/b"
	rules, err = tpl.EventRules(refs)
	if err != nil {
		t.Fatal(err)
	}
	var pattern struct{ Resources []string }
	if err := json.Unmarshal([]byte(rules[0].Pattern), &pattern); err != nil || len(pattern.Resources) != 2 ||
		!strings.HasSuffix(pattern.Resources[1], "matchmakingconfiguration/b") {
		t.Errorf("with two ARNs the pattern's resources = %v (%v), want both", pattern.Resources, err)
	}
}

func TestConditionsAreEvaluated(t *testing.T) {
	tpl, err := Parse([]byte(rulesSample))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		refs map[string]string
		want bool
	}{
		{"FlexMatchEnabled", nil, false},
		{"FlexMatchEnabled", map[string]string{"FlexMatchIntegration": "true"}, true},
		{"HasMatchmakingConfigurationArns", nil, false},
		{"HasMatchmakingConfigurationArns", map[string]string{"MatchmakingConfigurationArns": "arn:x"}, true},
		{"Either", map[string]string{"Stage": "prod"}, true},
		{"Never", map[string]string{"FlexMatchIntegration": "true"}, false},
	} {
		if got, err := (resolver{t: tpl, refs: c.refs}).condition(c.name, 0); err != nil || got != c.want {
			t.Errorf("%s with %v = %v, %v; want %v", c.name, c.refs, got, err, c.want)
		}
	}
	if _, err := (resolver{t: tpl}).condition("Missing", 0); err == nil {
		t.Error("an unknown condition evaluated")
	}
	cyclic, err := Parse([]byte("Conditions:\n  A: !Not [!Condition B]\n  B: !Not [!Condition A]\nResources:\n  Q: {Type: AWS::SQS::Queue}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (resolver{t: cyclic}).condition("A", 0); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Errorf("a cycle of conditions = %v, want an error", err)
	}
}

func TestEventRulesRefuseWhatCannotRunLocally(t *testing.T) {
	for name, rule := range map[string]string{
		"schedule":    "ScheduleExpression: rate(1 minute)",
		"queue":       "EventPattern: {source: [x]}\n      Targets: [{Id: q, Arn: !GetAtt Q.Arn}]",
		"transformer": "EventPattern: {source: [x]}\n      Targets: [{Id: f, Arn: !GetAtt F.Arn, InputPath: $.detail}]",
		"no pattern":  "Targets: [{Id: f, Arn: !GetAtt F.Arn}]",
	} {
		src := "Resources:\n  Q: {Type: AWS::SQS::Queue}\n  F: {Type: AWS::Serverless::Function}\n  R:\n    Type: AWS::Events::Rule\n    Properties:\n      " + rule + "\n"
		tpl, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rules, err := tpl.EventRules(nil); err == nil {
			t.Errorf("%s: %+v, want an error", name, rules)
		}
	}
}

func TestEventInvokeConfig(t *testing.T) {
	tpl, err := Parse([]byte(rulesSample))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.EventInvokeConfig("MatchmakingFunction", nil)
	want := EventInvokeConfig{MaximumRetryAttempts: 2, MaximumEventAge: time.Hour, OnFailureQueue: "DeadLetters"}
	if err != nil || got != want {
		t.Errorf("MatchmakingFunction = %+v, %v; want %+v", got, err, want)
	}
	got, err = tpl.EventInvokeConfig("PlainFunction", nil)
	if want := (EventInvokeConfig{MaximumRetryAttempts: 2, MaximumEventAge: 6 * time.Hour}); err != nil || got != want {
		t.Errorf("PlainFunction (Lambda's defaults) = %+v, %v; want %+v", got, err, want)
	}
	if _, err := tpl.EventInvokeConfig("Bus", nil); err == nil {
		t.Error("a bus has an EventInvokeConfig")
	}
	bad, _ := Parse([]byte("Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      EventInvokeConfig: {MaximumRetryAttempts: 3}\n"))
	if _, err := bad.EventInvokeConfig("F", nil); err == nil {
		t.Error("MaximumRetryAttempts 3 accepted; Lambda allows 0 to 2")
	}
}

// The repo's MatchmakingRule: no rule unless FlexMatchIntegration is
// "true"; then on the default bus, without resources unless ARNs are
// given, targeting MatchmakingFunction, whose failures go to
// MatchmakingDeadLetterQueue after 2 retries.
func TestRepoTemplateMatchmakingRule(t *testing.T) {
	tpl := loadRepoTemplate(t)
	if rules, err := tpl.EventRules(nil); err != nil || len(rules) != 0 {
		t.Fatalf("with the defaults = %+v, %v; want no rule", rules, err)
	}
	rules, err := tpl.EventRules(map[string]string{"FlexMatchIntegration": "true"})
	if err != nil || len(rules) != 1 {
		t.Fatalf("FlexMatch on = %+v, %v", rules, err)
	}
	want := `{"detail":{"type":["MatchmakingSucceeded"]},"detail-type":["GameLift Matchmaking Event"],"source":["aws.gamelift"]}`
	if r := rules[0]; r.EventBusName != "" || r.Pattern != want || len(r.Targets) != 1 || r.Targets[0].FunctionLogicalID != "MatchmakingFunction" {
		t.Errorf("MatchmakingRule = %+v", r)
	}
	cfg, err := tpl.EventInvokeConfig("MatchmakingFunction", nil)
	if err != nil || cfg.MaximumRetryAttempts != 2 || cfg.OnFailureQueue != "MatchmakingDeadLetterQueue" {
		t.Errorf("MatchmakingFunction's EventInvokeConfig = %+v, %v", cfg, err)
	}
}
