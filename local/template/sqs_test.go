package template

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// queueSample has a work queue with a dead-letter queue, as template.yaml's
// PlacementQueue, and SQS events written the ways SAM accepts them.
const queueSample = `
Parameters:
  Batch:
    Type: Number
    Default: 10
Resources:
  Work:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 180
      MessageRetentionPeriod: 3600
      DelaySeconds: 2
      SqsManagedSseEnabled: true
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt Dead.Arn
        maxReceiveCount: 5
  Dead:
    Type: AWS::SQS::Queue
    Properties:
      MessageRetentionPeriod: 1209600
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Work.Arn
            BatchSize: !Ref Batch
            FunctionResponseTypes:
              - ReportBatchItemFailures
        Slow:
          Type: SQS
          Properties:
            Queue: !GetAtt Dead.Arn
            BatchSize: 100
            MaximumBatchingWindowInSeconds: 5
            Enabled: false
            ScalingConfig:
              MaximumConcurrency: 2
        Plain:
          Type: SQS
          Properties:
            Queue: !GetAtt Work.Arn
`

func TestSQSEventSources(t *testing.T) {
	tpl := mustParse(t, queueSample)
	got, err := tpl.SQSEventSources(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []SQSEventSource{
		{FunctionLogicalID: "Worker", EventName: "Jobs", QueueLogicalID: "Work", BatchSize: 10, ReportBatchItemFailures: true, Enabled: true},
		{FunctionLogicalID: "Worker", EventName: "Slow", QueueLogicalID: "Dead", BatchSize: 100, MaximumBatchingWindow: 5 * time.Second, MaximumConcurrency: 2},
		// Lambda's defaults.
		{FunctionLogicalID: "Worker", EventName: "Plain", QueueLogicalID: "Work", BatchSize: 10, Enabled: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// A parameter value replaces the default, as for the environment.
	got, err = tpl.SQSEventSources(map[string]string{"Batch": "3"})
	if err != nil || got[0].BatchSize != 3 {
		t.Errorf("with refs: %+v, %v", got, err)
	}
}

func TestSQSEventSourceErrors(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"queue is not a GetAtt", "Queue: !GetAtt Work.Arn\n            BatchSize: !Ref", "Queue: arn:aws:sqs:x\n            BatchSize: !Ref", "want !GetAtt"},
		{"queue's URL", "Queue: !GetAtt Work.Arn\n            BatchSize: !Ref", "Queue: !GetAtt Work.QueueUrl\n            BatchSize: !Ref", "want the Arn attribute"},
		{"not a queue", "Queue: !GetAtt Dead.Arn", "Queue: !GetAtt Worker.Arn", "is not a AWS::SQS::Queue"},
		{"batch too big", "BatchSize: 100", "BatchSize: 10001", "BatchSize 10001"},
		{"batch above 10 without a window", "MaximumBatchingWindowInSeconds: 5", "MaximumBatchingWindowInSeconds: 0", "needs MaximumBatchingWindowInSeconds"},
		{"window too long", "MaximumBatchingWindowInSeconds: 5", "MaximumBatchingWindowInSeconds: 301", "MaximumBatchingWindowInSeconds 301"},
		{"bad response type", "- ReportBatchItemFailures", "- Nope", `"Nope"`},
		{"bad enabled", "Enabled: false", "Enabled: maybe", `"maybe"`},
		{"concurrency below 2", "MaximumConcurrency: 2", "MaximumConcurrency: 1", "ScalingConfig.MaximumConcurrency 1"},
		{"filters", "Enabled: false", "FilterCriteria: {Filters: [{Pattern: '{}'}]}", "do not run locally"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(queueSample, tc.from, tc.to, 1)
			if src == queueSample {
				t.Fatal("fixture edit did not apply")
			}
			_, err := mustParse(t, src).SQSEventSources(nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Worker event") {
				t.Errorf("err = %v, want one naming the event and containing %q", err, tc.want)
			}
		})
	}
}

func TestQueueSettings(t *testing.T) {
	queues, err := mustParse(t, queueSample).Queues()
	if err != nil {
		t.Fatal(err)
	}
	want := []Queue{
		{LogicalID: "Work", VisibilityTimeout: 3 * time.Minute, MessageRetention: time.Hour, Delay: 2 * time.Second,
			Redrive: &Redrive{DeadLetterQueue: "Dead", MaxReceiveCount: 5}},
		// SQS's defaults.
		{LogicalID: "Dead", VisibilityTimeout: 30 * time.Second, MessageRetention: 14 * 24 * time.Hour},
	}
	if !reflect.DeepEqual(queues, want) {
		t.Errorf("got  %+v\nwant %+v", queues, want)
	}
}

func TestQueueErrors(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"visibility too long", "VisibilityTimeout: 180", "VisibilityTimeout: 43201", "VisibilityTimeout 43201"},
		{"retention too short", "MessageRetentionPeriod: 3600", "MessageRetentionPeriod: 59", "MessageRetentionPeriod 59"},
		{"delay too long", "DelaySeconds: 2", "DelaySeconds: 901", "DelaySeconds 901"},
		{"fifo", "SqsManagedSseEnabled: true", "FifoQueue: true", "FIFO queues do not run locally"},
		{"dead letters to nowhere", "deadLetterTargetArn: !GetAtt Dead.Arn", "deadLetterTargetArn: !GetAtt Nowhere.Arn", "Nowhere is not a AWS::SQS::Queue"},
		{"dead-letter URL", "deadLetterTargetArn: !GetAtt Dead.Arn", "deadLetterTargetArn: !Ref Dead", "want !GetAtt"},
		{"no receive count", "maxReceiveCount: 5", "other: 5", "maxReceiveCount is required"},
		{"receive count zero", "maxReceiveCount: 5", "maxReceiveCount: 0", "maxReceiveCount 0"},
		{"policy as a string", "RedrivePolicy:\n        deadLetterTargetArn: !GetAtt Dead.Arn\n        maxReceiveCount: 5",
			`RedrivePolicy: '{"maxReceiveCount": 5}'`, "want a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(queueSample, tc.from, tc.to, 1)
			if src == queueSample {
				t.Fatal("fixture edit did not apply")
			}
			_, err := mustParse(t, src).Queues()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "queue Work") {
				t.Errorf("err = %v, want one naming the queue and containing %q", err, tc.want)
			}
		})
	}
}
