package stack

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// moto puts every resource in this account; ARNs in refs use it.
const motoAccount = "123456789012"

// EventsSource is the source of every event the EventsFunction publishes.
const EventsSource = "gamefabric.allocation"

// The default bus, where AWS services (GameLift's FlexMatch) put events.
const defaultBus = "default"

// startEventing creates the template's SQS queues and EventBridge buses in
// moto, and records each table's stream. The tap on GameServerEventBus is
// a rule matching EventsSource with two SQS targets: one the stack prints
// and empties (WatchEvents), one left for tests and people (ReadTap).
func (c *Components) startEventing(ctx context.Context) error {
	if err := c.createQueues(ctx, c.SQS()); err != nil {
		return err
	}
	buses, err := c.Template.EventBuses()
	if err != nil {
		return err
	}
	c.EventBuses = map[string]string{}
	for _, b := range buses {
		if _, err := c.EventBridge().CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(b.Name)}); err != nil {
			return fmt.Errorf("event bus %s (%s): %w", b.Name, b.LogicalID, err)
		}
		c.EventBuses[b.LogicalID] = b.Name
	}
	if bus, ok := c.EventBuses["GameServerEventBus"]; ok {
		urls, err := RouteToQueues(ctx, c.EventBridge(), c.SQS(), bus, "local-events-tap", "local-events-tap", "local-events-log")
		if err != nil {
			return fmt.Errorf("events tap: %w", err)
		}
		c.EventsTapURL, c.eventsLogURL = urls[0], urls[1]
	}
	ddb := harness.NewDynamoDB(harness.AWSConfig(), c.DynamoDB)
	c.Streams = map[string]string{}
	for logical, name := range c.Tables {
		out, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", name, err)
		}
		if arn := aws.ToString(out.Table.LatestStreamArn); arn != "" {
			c.Streams[logical] = arn
		}
	}
	return nil
}

// createQueues creates the template's SQS queues in moto with their
// settings: each with its own first, then the redrive policies, so a
// dead-letter queue exists whatever the template order. moto moves a
// message received maxReceiveCount times to it, as SQS does.
func (c *Components) createQueues(ctx context.Context, q *sqs.Client) error {
	queues, err := c.Template.Queues()
	if err != nil {
		return err
	}
	c.Queues, c.QueueARNs = map[string]string{}, map[string]string{}
	for _, tq := range queues {
		url, arn, err := createQueue(ctx, q, cmp.Or(tq.Name, tq.LogicalID), queueAttributes(tq))
		if err != nil {
			return fmt.Errorf("queue %s: %w", tq.LogicalID, err)
		}
		c.Queues[tq.LogicalID], c.QueueARNs[tq.LogicalID] = url, arn
	}
	for _, tq := range queues {
		if tq.Redrive == nil {
			continue
		}
		dlq, ok := c.QueueARNs[tq.Redrive.DeadLetterQueue]
		if !ok {
			return fmt.Errorf("queue %s: no dead-letter queue %s", tq.LogicalID, tq.Redrive.DeadLetterQueue)
		}
		policy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlq, tq.Redrive.MaxReceiveCount)
		_, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(c.Queues[tq.LogicalID]),
			Attributes: map[string]string{string(sqstypes.QueueAttributeNameRedrivePolicy): policy}})
		if err != nil {
			return fmt.Errorf("queue %s RedrivePolicy: %w", tq.LogicalID, err)
		}
	}
	return nil
}

// queueAttributes are a template queue's settings as SQS attributes.
func queueAttributes(q template.Queue) map[string]string {
	seconds := func(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }
	return map[string]string{
		string(sqstypes.QueueAttributeNameVisibilityTimeout):      seconds(q.VisibilityTimeout),
		string(sqstypes.QueueAttributeNameMessageRetentionPeriod): seconds(q.MessageRetention),
		string(sqstypes.QueueAttributeNameDelaySeconds):           seconds(q.Delay),
	}
}

// createQueue creates a queue in moto and returns its URL and the ARN
// moto gave it (a redrive policy must name exactly that).
func createQueue(ctx context.Context, q *sqs.Client, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", "", fmt.Errorf("create queue %s: %w", name, err)
	}
	got, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("queue %s ARN: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

// RouteToQueues creates the SQS queues (in moto) and a rule on bus that
// delivers every event of EventsSource to each; it returns their URLs, in
// order.
func RouteToQueues(ctx context.Context, eb *eventbridge.Client, q *sqs.Client, bus, rule string, queues ...string) ([]string, error) {
	var urls []string
	var targets []ebtypes.Target
	for i, name := range queues {
		url, arn, err := createQueue(ctx, q, name, nil)
		if err != nil {
			return nil, err
		}
		urls = append(urls, url)
		targets = append(targets, ebtypes.Target{Id: aws.String(fmt.Sprintf("%s-%d", rule, i)), Arn: aws.String(arn)})
	}
	pattern, _ := json.Marshal(map[string][]string{"source": {EventsSource}})
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(rule), EventBusName: aws.String(bus), EventPattern: aws.String(string(pattern))}); err != nil {
		return nil, fmt.Errorf("rule %s: %w", rule, err)
	}
	return urls, putTargets(ctx, eb, bus, rule, targets...)
}

func putTargets(ctx context.Context, eb *eventbridge.Client, bus, rule string, targets ...ebtypes.Target) error {
	out, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rule), EventBusName: aws.String(bus), Targets: targets})
	if err == nil && out.FailedEntryCount > 0 {
		err = fmt.Errorf("%d targets refused", out.FailedEntryCount)
	}
	if err != nil {
		return fmt.Errorf("rule %s targets: %w", rule, err)
	}
	return nil
}

// eventRefs are the queues', buses' and streams' references.
func (c *Components) eventRefs(refs map[string]string) {
	for logical, url := range c.Queues {
		refs[logical] = url
		refs[logical+".Arn"] = c.QueueARNs[logical]
		refs[logical+".QueueName"] = url[strings.LastIndexByte(url, '/')+1:]
		refs[logical+".QueueUrl"] = url
	}
	for logical, name := range c.EventBuses {
		refs[logical] = name
		refs[logical+".Name"] = name
		refs[logical+".Arn"] = "arn:aws:events:" + harness.Region + ":" + motoAccount + ":event-bus/" + name
	}
	for logical, arn := range c.Streams {
		refs[logical+".StreamArn"] = arn
	}
}

// SQS is a client for moto's SQS.
func (c *Components) SQS() *sqs.Client {
	return sqs.NewFromConfig(harness.AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(c.Moto) })
}

// EventBridge is a client for moto's EventBridge.
func (c *Components) EventBridge() *eventbridge.Client {
	return eventbridge.NewFromConfig(harness.AWSConfig(), func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(c.Moto) })
}

// DynamoDBStreams is a client for DynamoDB Local's streams.
func (c *Components) DynamoDBStreams() *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(harness.AWSConfig(), func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(c.DynamoDB) })
}
