// Package eventbus puts catalogue events on an EventBridge bus.
package eventbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
)

// API is the part of the EventBridge client the publisher uses.
type API interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var _ API = (*eventbridge.Client)(nil)

// PutEvents limits (EventBridge quotas): entries per call and bytes per
// call, counted as EventBridge counts an entry's size.
const (
	maxEntries    = 10
	maxBatchBytes = 256 * 1024
)

// ErrTooLarge: one event alone exceeds what PutEvents accepts.
var ErrTooLarge = errors.New("event exceeds EventBridge's 256 KB entry limit")

// Publisher puts events on Bus.
type Publisher struct {
	API API
	Bus string
	// Attempts is how often an entry EventBridge refused (FailedEntries:
	// throttling, an internal failure) is put; at least 1. A failed call is
	// not repeated here: the SDK's retryer already retried it.
	Attempts int
	// Backoff is the wait before the second attempt, doubled after.
	Backoff time.Duration
}

// Publish puts evs in order, in as few calls as the limits allow, and
// returns how many leading events are known to be on the bus. It stops at
// the first call or entry that still fails: the events after it are left
// for the caller to hand back (some of them may have been put too, which
// their idempotency keys make harmless).
func (p Publisher) Publish(ctx context.Context, evs []eventcatalog.Event) (int, error) {
	entries := make([]types.PutEventsRequestEntry, len(evs))
	sizes := make([]int, len(evs))
	for i, e := range evs {
		// Nothing is put before every entry is built: an event that cannot
		// be one leaves none known to be on the bus.
		detail, err := e.Detail()
		if err != nil {
			return 0, fmt.Errorf("event %s %s: %w", e.Type, e.Key(), err)
		}
		entries[i] = types.PutEventsRequestEntry{EventBusName: aws.String(p.Bus), Source: aws.String(eventcatalog.Source),
			DetailType: aws.String(string(e.Type)), Detail: aws.String(string(detail))}
		if !e.Time.IsZero() {
			entries[i].Time = aws.Time(e.Time)
		}
		entries[i].Resources = e.Resources
		if sizes[i] = entrySize(entries[i]); sizes[i] > maxBatchBytes {
			return 0, fmt.Errorf("event %s %s: %w", e.Type, e.Key(), ErrTooLarge)
		}
	}
	for start := 0; start < len(entries); {
		end := start
		for size := 0; end < len(entries) && end-start < maxEntries && size+sizes[end] <= maxBatchBytes; end++ {
			size += sizes[end]
		}
		if failed, err := p.put(ctx, entries[start:end]); err != nil {
			return start + failed, err
		}
		start = end
	}
	return len(entries), nil
}

// put puts one batch, repeating the entries EventBridge refused; it returns
// the index of the first entry that is not known to be on the bus.
func (p Publisher) put(ctx context.Context, batch []types.PutEventsRequestEntry) (int, error) {
	pending := make([]int, len(batch)) // indexes into batch, in order
	for i := range pending {
		pending[i] = i
	}
	wait := p.Backoff
	for attempt := 1; ; attempt++ {
		in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(pending))}
		for i, j := range pending {
			in.Entries[i] = batch[j]
		}
		out, err := p.API.PutEvents(ctx, in)
		if err != nil {
			return pending[0], fmt.Errorf("put %d events: %w", len(pending), err)
		}
		var still []int
		var last *types.PutEventsResultEntry
		for i, r := range out.Entries {
			if r.ErrorCode != nil && i < len(pending) {
				still, last = append(still, pending[i]), &out.Entries[i]
			}
		}
		// An answer that does not account for every entry is not proof
		// that the rest were put.
		if len(out.Entries) < len(pending) {
			still = append(still, pending[len(out.Entries):]...)
		}
		if len(still) == 0 {
			return len(batch), nil
		}
		if attempt >= max(1, p.Attempts) {
			return still[0], refused(len(still), last)
		}
		pending = still
		select {
		case <-ctx.Done():
			return pending[0], fmt.Errorf("put %d events: %w", len(pending), ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func refused(n int, last *types.PutEventsResultEntry) error {
	if last == nil {
		return fmt.Errorf("EventBridge answered for fewer entries than it was sent; %d not known to be put", n)
	}
	return fmt.Errorf("EventBridge refused %d events: %s: %s", n, aws.ToString(last.ErrorCode), aws.ToString(last.ErrorMessage))
}

// entrySize is an entry's size as EventBridge counts it against the
// 256 KB limit of a PutEvents call.
func entrySize(e types.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}
