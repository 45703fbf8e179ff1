package template

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// eventsSample has the constructs issue 14 adds to template.yaml, written
// as the contract (/work/contract/issue14.md) specifies them.
const eventsSample = `
Parameters:
  EventsMaxRetryAttempts:
    Type: Number
    Default: 5
  LogLevel:
    Type: String
    Default: info
Globals:
  Function:
    Timeout: 10
Resources:
  GameInstancesTable:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: gameInstanceId, AttributeType: S}]
      KeySchema: [{AttributeName: gameInstanceId, KeyType: HASH}]
      StreamSpecification:
        StreamViewType: NEW_AND_OLD_IMAGES
  GameServerEventBus:
    Type: AWS::Events::EventBus
    Properties:
      Name: !Sub "${AWS::StackName}-game-server-events"
  EventsDLQ:
    Type: AWS::SQS::Queue
    Properties:
      MessageRetentionPeriod: 1209600
      SqsManagedSseEnabled: true
  NamedQueue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub "${AWS::StackName}-named"
  EventsFunction:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 60
      Environment:
        Variables:
          EVENT_BUS_NAME: !Ref GameServerEventBus
          LOG_LEVEL: !Ref LogLevel
      Policies:
        - Statement:
            - Effect: Allow
              Action: events:PutEvents
              Resource: !GetAtt GameServerEventBus.Arn
      Events:
        GameInstancesStream:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt GameInstancesTable.StreamArn
            StartingPosition: TRIM_HORIZON
            BatchSize: 100
            MaximumBatchingWindowInSeconds: 1
            MaximumRetryAttempts: !Ref EventsMaxRetryAttempts
            BisectBatchOnFunctionError: true
            MaximumRecordAgeInSeconds: 21600
            FunctionResponseTypes: [ReportBatchItemFailures]
            DestinationConfig:
              OnFailure:
                Type: SQS
                Destination: !GetAtt EventsDLQ.Arn
            FilterCriteria:
              Filters:
                - Pattern: '{"eventName":["INSERT"]}'
                - Pattern: '{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"state":{"S":[{"anything-but":["Linked"]}]}}}}'
        Plain:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt GameInstancesTable.StreamArn
            StartingPosition: LATEST
  Other:
    Type: AWS::Serverless::Function
`

func TestDynamoDBEventSources(t *testing.T) {
	tpl := mustParse(t, eventsSample)
	got, err := tpl.DynamoDBEventSources(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []DynamoDBEventSource{{
		FunctionLogicalID: "EventsFunction", EventName: "GameInstancesStream", TableLogicalID: "GameInstancesTable",
		StartingPosition: "TRIM_HORIZON", BatchSize: 100, MaximumBatchingWindow: time.Second, MaximumRetryAttempts: 5,
		BisectBatchOnFunctionError: true, MaximumRecordAge: 6 * time.Hour, ReportBatchItemFailures: true, OnFailureQueue: "EventsDLQ",
		Filters: []string{`{"eventName":["INSERT"]}`, `{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"state":{"S":[{"anything-but":["Linked"]}]}}}}`},
	}, {
		// Lambda's defaults.
		FunctionLogicalID: "EventsFunction", EventName: "Plain", TableLogicalID: "GameInstancesTable",
		StartingPosition: "LATEST", BatchSize: 100, MaximumRetryAttempts: -1,
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// A parameter value replaces the default, as for the environment.
	got, err = tpl.DynamoDBEventSources(map[string]string{"EventsMaxRetryAttempts": "2"})
	if err != nil || got[0].MaximumRetryAttempts != 2 {
		t.Errorf("with refs: %+v, %v", got, err)
	}
}

func TestDynamoDBEventSourceErrors(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"stream is not a GetAtt", "Stream: !GetAtt GameInstancesTable.StreamArn\n            StartingPosition: TRIM", "Stream: arn:aws:dynamodb:x\n            StartingPosition: TRIM", "want !GetAtt"},
		{"stream of a queue", "Stream: !GetAtt GameInstancesTable.StreamArn\n            StartingPosition: TRIM", "Stream: !GetAtt EventsDLQ.StreamArn\n            StartingPosition: TRIM", "is not a AWS::DynamoDB::Table"},
		{"destination is the bus", "Destination: !GetAtt EventsDLQ.Arn", "Destination: !GetAtt GameServerEventBus.Arn", "is not a AWS::SQS::Queue"},
		{"bad pattern", `'{"eventName":["INSERT"]}'`, `'{"eventName":'`, "not a JSON object"},
		{"bad response type", "[ReportBatchItemFailures]", "[Nope]", `"Nope"`},
		{"bad position", "StartingPosition: TRIM_HORIZON", "StartingPosition: AT_TIMESTAMP", "AT_TIMESTAMP"},
		{"batch too big", "BatchSize: 100", "BatchSize: 10001", "BatchSize 10001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(eventsSample, tc.from, tc.to, 1)
			if src == eventsSample {
				t.Fatal("fixture edit did not apply")
			}
			_, err := mustParse(t, src).DynamoDBEventSources(nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "GameInstancesStream") {
				t.Errorf("err = %v, want one naming the event and containing %q", err, tc.want)
			}
		})
	}
}

func TestQueuesBusesAndTimeouts(t *testing.T) {
	tpl := mustParse(t, eventsSample)
	queues, err := tpl.Queues()
	want := []Queue{
		{LogicalID: "EventsDLQ", VisibilityTimeout: 30 * time.Second, MessageRetention: 14 * 24 * time.Hour},
		{LogicalID: "NamedQueue", Name: "local-named", VisibilityTimeout: 30 * time.Second, MessageRetention: 4 * 24 * time.Hour},
	}
	if err != nil || !reflect.DeepEqual(queues, want) {
		t.Errorf("Queues = %+v, %v", queues, err)
	}
	buses, err := tpl.EventBuses()
	if err != nil || !reflect.DeepEqual(buses, []EventBus{{LogicalID: "GameServerEventBus", Name: "local-game-server-events"}}) {
		t.Errorf("EventBuses = %+v, %v", buses, err)
	}
	for fn, want := range map[string]time.Duration{"EventsFunction": time.Minute, "Other": 10 * time.Second} {
		if got, err := tpl.FunctionTimeout(fn); err != nil || got != want {
			t.Errorf("FunctionTimeout(%s) = %v, %v; want %v", fn, got, err, want)
		}
	}
	tables, err := tpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	spec := tables[0].Input.StreamSpecification
	if spec == nil || spec.StreamEnabled == nil || !*spec.StreamEnabled || spec.StreamViewType != types.StreamViewTypeNewAndOldImages {
		t.Errorf("stream spec %+v", spec)
	}
	env, err := tpl.FunctionEnv("EventsFunction", map[string]string{"GameServerEventBus": "local-game-server-events"})
	if err != nil || env["EVENT_BUS_NAME"] != "local-game-server-events" || env["LOG_LEVEL"] != "info" {
		t.Errorf("env %v, %v", env, err)
	}
}
