//go:build integration

package stack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// eventsTemplate has issue 14's resources as the contract names them.
const eventsTemplate = `
Parameters:
  LogLevel: {Type: String, Default: info}
Resources:
  GameInstancesTable:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: gameInstanceId, AttributeType: S}]
      KeySchema: [{AttributeName: gameInstanceId, KeyType: HASH}]
      StreamSpecification: {StreamViewType: NEW_AND_OLD_IMAGES}
  GameServerEventBus:
    Type: AWS::Events::EventBus
    Properties:
      Name: !Sub "${AWS::StackName}-game-server-events"
  EventsDLQ:
    Type: AWS::SQS::Queue
  EventsFunction:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          EVENT_BUS_NAME: !Ref GameServerEventBus
          BUS_ARN: !GetAtt GameServerEventBus.Arn
          DLQ_ARN: !GetAtt EventsDLQ.Arn
          DLQ_URL: !Ref EventsDLQ
          STREAM: !GetAtt GameInstancesTable.StreamArn
`

func TestComponentsRunTheEventBusQueuesAndTap(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "template.yaml"), []byte(eventsTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.AnyFreePorts()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := StartComponents(ctx, cfg, root)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	env, err := c.FunctionEnv("EventsFunction", c.Refs(cfg, "http://api"))
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(env, "\n") + "\n"
	for _, want := range []string{
		"EVENT_BUS_NAME=local-game-server-events",
		"BUS_ARN=arn:aws:events:us-east-1:123456789012:event-bus/local-game-server-events",
		"DLQ_ARN=arn:aws:sqs:us-east-1:123456789012:EventsDLQ",
		"DLQ_URL=" + c.Queues["EventsDLQ"],
		"STREAM=" + c.Streams["GameInstancesTable"],
		"AWS_ENDPOINT_URL_EVENTBRIDGE=" + c.Moto,
		"AWS_ENDPOINT_URL_SQS=" + c.Moto,
	} {
		if !strings.Contains(joined, want+"\n") {
			t.Errorf("env lacks %s:\n%s", want, joined)
		}
	}
	if c.Streams["GameInstancesTable"] == "" || c.Queues["EventsDLQ"] == "" || c.EventsTapURL == "" {
		t.Fatalf("streams %v queues %v tap %q", c.Streams, c.Queues, c.EventsTapURL)
	}

	var out testkit.SyncBuffer
	watchCtx, stopWatch := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.WatchEvents(watchCtx, &out) }()
	defer func() { stopWatch(); <-done }()

	put := func(source, detailType, detail string) {
		t.Helper()
		res, err := c.EventBridge().PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			EventBusName: aws.String("local-game-server-events"), Source: aws.String(source), DetailType: aws.String(detailType), Detail: aws.String(detail),
		}}})
		if err != nil || res.FailedEntryCount != 0 {
			t.Fatalf("PutEvents: %+v, %v", res, err)
		}
	}
	put("gamefabric.allocation", "GameServerAllocated", `{"idempotencyKey":"gi-1:2:GameServerAllocated","gameInstanceId":"gi-1","previousState":"Allocating","state":"Allocated"}`)
	put("somebody.else", "Other", `{}`)
	put("gamefabric.allocation", "RegionHealthChanged", `{"idempotencyKey":"us-west:Unhealthy:1","region":"us-west","previousState":"Healthy","state":"Unhealthy"}`)

	testkit.WaitFor(t, 10*time.Second, "two event lines", func() bool { return strings.Count(out.String(), "event ") >= 2 })
	lines := out.String()
	for _, want := range []string{
		"event GameServerAllocated gi-1 Allocating → Allocated (gi-1:2:GameServerAllocated)\n",
		"event RegionHealthChanged region us-west Healthy → Unhealthy (us-west:Unhealthy:1)\n",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("stack log lacks %q:\n%s", want, lines)
		}
	}
	tapped, err := c.ReadTap(ctx, 5*time.Second)
	for len(tapped) < 2 && err == nil {
		var more []Published
		more, err = c.ReadTap(ctx, 2*time.Second)
		if len(more) == 0 {
			break
		}
		tapped = append(tapped, more...)
	}
	if err != nil || len(tapped) != 2 || tapped[0].Source != EventsSource || tapped[0].DetailType != "GameServerAllocated" {
		t.Fatalf("tap: %+v, %v", tapped, err)
	}
	if strings.Contains(lines, "Other") {
		t.Errorf("an event of another source reached the tap:\n%s", lines)
	}
}
