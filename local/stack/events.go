package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

// moto puts every resource in this account; ARNs in refs use it.
const motoAccount = "123456789012"

// EventsSource is the source of every event the EventsFunction publishes.
const EventsSource = "gamefabric.allocation"

// The local tap on the event bus: a rule matching EventsSource with two
// SQS targets, one the stack prints and empties (events log) and one left
// for tests and people to read (events tap).
const (
	tapRule     = "local-events-tap"
	tapQueue    = "local-events-tap"
	logQueue    = "local-events-log"
	tapBusLogID = "GameServerEventBus"
)

// startEventing creates the template's SQS queues and EventBridge buses in
// moto and the tap on GameServerEventBus, and records each table's stream.
func (c *Components) startEventing(ctx context.Context) error {
	awsCfg := harness.AWSConfig()
	q := c.SQS()
	if err := c.createQueues(ctx, q); err != nil {
		return err
	}
	buses, err := c.Template.EventBuses()
	if err != nil {
		return err
	}
	eb := c.EventBridge()
	c.EventBuses = map[string]string{}
	for _, b := range buses {
		if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(b.Name)}); err != nil {
			return fmt.Errorf("event bus %s (%s): %w", b.Name, b.LogicalID, err)
		}
		c.EventBuses[b.LogicalID] = b.Name
	}
	if bus, ok := c.EventBuses[tapBusLogID]; ok {
		if err := c.startTap(ctx, q, eb, bus); err != nil {
			return err
		}
	}
	ddb := harness.NewDynamoDB(awsCfg, c.DynamoDB)
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

func (c *Components) startTap(ctx context.Context, q *sqs.Client, eb *eventbridge.Client, bus string) error {
	urls, err := RouteToQueues(ctx, eb, q, bus, tapRule, tapQueue, logQueue)
	if err != nil {
		return fmt.Errorf("events tap: %w", err)
	}
	c.EventsTapURL, c.eventsLogURL = urls[0], urls[1]
	return nil
}

// RouteToQueues creates the SQS queues (in moto) and a rule on bus that
// delivers every event of EventsSource to each; it returns their URLs, in
// order.
func RouteToQueues(ctx context.Context, eb *eventbridge.Client, q *sqs.Client, bus, rule string, queues ...string) ([]string, error) {
	var urls []string
	in := &eventbridge.PutTargetsInput{Rule: aws.String(rule), EventBusName: aws.String(bus)}
	for i, name := range queues {
		url, arn, err := createQueue(ctx, q, name, nil)
		if err != nil {
			return nil, err
		}
		urls = append(urls, url)
		in.Targets = append(in.Targets, ebTarget(fmt.Sprintf("%s-%d", rule, i), arn))
	}
	pattern, _ := json.Marshal(map[string][]string{"source": {EventsSource}})
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(rule), EventBusName: aws.String(bus), EventPattern: aws.String(string(pattern))}); err != nil {
		return nil, fmt.Errorf("rule %s: %w", rule, err)
	}
	out, err := eb.PutTargets(ctx, in)
	if err == nil && out.FailedEntryCount > 0 {
		err = fmt.Errorf("%d targets failed", out.FailedEntryCount)
	}
	if err != nil {
		return nil, fmt.Errorf("rule %s targets: %w", rule, err)
	}
	return urls, nil
}

func ebTarget(id, arn string) ebtypes.Target {
	return ebtypes.Target{Id: aws.String(id), Arn: aws.String(arn)}
}

// eventRefs are the deploy-time values of the queues', buses' and
// streams' references.
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
	return sqs.NewFromConfig(harness.AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(c.motoEndpoint()) })
}

// EventBridge is a client for moto's EventBridge.
func (c *Components) EventBridge() *eventbridge.Client {
	return eventbridge.NewFromConfig(harness.AWSConfig(), func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(c.motoEndpoint()) })
}

// DynamoDBStreams is a client for DynamoDB Local's streams.
func (c *Components) DynamoDBStreams() *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(harness.AWSConfig(), func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(c.DynamoDB) })
}

func (c *Components) motoEndpoint() string {
	if c.Moto != "" {
		return c.Moto
	}
	return c.SecretsManager
}

// Published is one event as EventBridge delivered it to the tap.
type Published struct {
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Time       string          `json:"time"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
	// Raw is the whole message body.
	Raw string `json:"-"`
}

// ReadTap receives (and deletes) the events delivered to the tap queue
// (EventsTapURL) so far, waiting up to wait for the first one. Nothing else
// reads that queue.
func (c *Components) ReadTap(ctx context.Context, wait time.Duration) ([]Published, error) {
	if c.EventsTapURL == "" {
		return nil, errors.New("no events tap: the template has no GameServerEventBus")
	}
	return receive(ctx, c.SQS(), c.EventsTapURL, wait)
}

// ReadQueue receives (and deletes) the messages on the template queue
// logicalID (e.g. EventsDLQ), waiting up to wait for the first.
func (c *Components) ReadQueue(ctx context.Context, logicalID string, wait time.Duration) ([]string, error) {
	url, ok := c.Queues[logicalID]
	if !ok {
		return nil, fmt.Errorf("no queue %s in the template", logicalID)
	}
	msgs, err := receive(ctx, c.SQS(), url, wait)
	var bodies []string
	for _, m := range msgs {
		bodies = append(bodies, m.Raw)
	}
	return bodies, err
}

func receive(ctx context.Context, q *sqs.Client, url string, wait time.Duration) ([]Published, error) {
	var out []Published
	deadline := time.Now().Add(wait)
	for {
		res, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			return out, err
		}
		for _, m := range res.Messages {
			p := Published{Raw: aws.ToString(m.Body)}
			_ = json.Unmarshal([]byte(p.Raw), &p)
			out = append(out, p)
			if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return out, err
			}
		}
		if len(res.Messages) > 0 {
			continue // drain what is there
		}
		if len(out) > 0 || time.Now().After(deadline) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WatchEvents prints each event published on the bus as one line starting
// with "event " to w until ctx ends, and keeps the latest for RecentEvents.
func (c *Components) WatchEvents(ctx context.Context, w io.Writer) {
	if c.eventsLogURL == "" {
		return
	}
	q := c.SQS()
	for ctx.Err() == nil {
		msgs, err := receive(ctx, q, c.eventsLogURL, 0)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(w, "event watcher: %v\n", err)
		}
		for _, m := range msgs {
			line := EventLine(m)
			fmt.Fprintln(w, line)
			c.events.add(m, line)
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// EventLine is the readable one-line form of a published event:
// "event GameServerAllocated gi-1 Allocating → Allocated (gi-1:2:GameServerAllocated)",
// and for a FlexMatch match's event published again, where its players
// connect: "event GameFabricMatchmakingSucceeded match m-1 at 127.0.0.1:7001 (m-1:2:…)".
func EventLine(p Published) string {
	d := Fields(p.Detail)
	subject := d.GameInstanceID
	switch {
	case subject != "":
	case d.MatchID != "":
		subject = "match " + d.MatchID
	default:
		subject = "region " + d.Region
	}
	if at := d.ConnectTo(); d.State == "" && at != "" {
		return fmt.Sprintf("event %s %s at %s (%s)", p.DetailType, subject, at, d.IdempotencyKey)
	}
	prev := d.PreviousState
	if prev == "" {
		prev = "-"
	}
	return fmt.Sprintf("event %s %s %s → %s (%s)", p.DetailType, subject, prev, d.State, d.IdempotencyKey)
}

// EventFields are what the local tools show of an event's detail: every
// field is empty when the detail does not have it.
type EventFields struct {
	IdempotencyKey  string `json:"idempotencyKey"`
	GameInstanceID  string `json:"gameInstanceId"`
	MatchID         string `json:"matchId"`
	Region          string `json:"region"`
	State           string `json:"state"`
	PreviousState   string `json:"previousState"`
	GameSessionInfo struct {
		IPAddress string `json:"ipAddress"`
		Port      int    `json:"port"`
	} `json:"gameSessionInfo"`
}

// Fields reads an event's detail; a detail without them (or no JSON
// object) leaves them empty, and still shows its line.
func Fields(detail json.RawMessage) EventFields {
	var d EventFields
	_ = json.Unmarshal(detail, &d)
	return d
}

// ConnectTo is where a re-published match's players connect (ip:port),
// or "".
func (d EventFields) ConnectTo() string {
	if d.GameSessionInfo.IPAddress == "" {
		return ""
	}
	return net.JoinHostPort(d.GameSessionInfo.IPAddress, strconv.Itoa(d.GameSessionInfo.Port))
}

// SeenEvent is one event WatchEvents received, numbered in arrival order.
type SeenEvent struct {
	Seq      uint64    `json:"seq"`
	Received time.Time `json:"received"`
	Line     string    `json:"line"` // as printed: EventLine
	Published
}

// keptEvents bounds what RecentEvents can return: a dashboard shows the
// latest, and a long-running make dev must not grow without limit.
const keptEvents = 256

// eventRing keeps the latest keptEvents events WatchEvents printed; its
// zero value is ready. Watching the log queue is the only way to see every
// event (a queue delivers each message once), so the watcher shares what it
// reads instead of a second reader competing for it.
type eventRing struct {
	mu   sync.Mutex
	seq  uint64
	ring []SeenEvent // oldest first, at most keptEvents
}

func (r *eventRing) add(p Published, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if len(r.ring) == keptEvents {
		r.ring = append(r.ring[:0], r.ring[1:]...)
	}
	r.ring = append(r.ring, SeenEvent{Seq: r.seq, Received: time.Now().UTC(), Line: line, Published: p})
}

func (r *eventRing) since(after uint64) []SeenEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []SeenEvent
	for _, e := range r.ring {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out
}

// RecentEvents returns the events WatchEvents has printed whose Seq is
// above after (0 = all it keeps, at most the latest 256), oldest first.
func (c *Components) RecentEvents(after uint64) []SeenEvent {
	return c.events.since(after)
}
