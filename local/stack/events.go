package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

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

// ReadTap receives (and deletes) the events on the tap queue (EventsTapURL)
// so far, waiting up to wait for the first one.
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
	case d.PlacementID != "": // GameLift's own placement event
		subject = "placement " + d.PlacementID
	default:
		subject = "region " + d.Region
	}
	if at := d.ConnectTo(); d.State == "" && at != "" {
		return fmt.Sprintf("event %s %s at %s (%s)", p.DetailType, subject, at, d.IdempotencyKey)
	}
	if d.State == "" && d.Type != "" {
		return fmt.Sprintf("event %s %s %s (%s)", p.DetailType, subject, d.Type, d.IdempotencyKey)
	}
	prev := d.PreviousState
	if prev == "" {
		prev = "-"
	}
	return fmt.Sprintf("event %s %s %s → %s (%s)", p.DetailType, subject, prev, d.State, d.IdempotencyKey)
}

// EventFields are what the local tools show of an event's detail.
type EventFields struct {
	IdempotencyKey  string `json:"idempotencyKey"`
	GameInstanceID  string `json:"gameInstanceId"`
	MatchID         string `json:"matchId"`
	PlacementID     string `json:"placementId"`
	Type            string `json:"type"` // a GameLift placement event's
	Region          string `json:"region"`
	State           string `json:"state"`
	PreviousState   string `json:"previousState"`
	GameSessionInfo struct {
		IPAddress string `json:"ipAddress"`
		Port      int    `json:"port"`
	} `json:"gameSessionInfo"`
}

// Fields reads an event's detail; what it lacks is left empty.
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

// eventRing keeps the latest keptEvents events WatchEvents printed. A queue
// delivers each message once, so the watcher shares what it reads instead
// of a second reader competing for it.
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
