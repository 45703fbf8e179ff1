// Package eventsapp is EventsFunction's composition root: DynamoDB stream
// records of GameInstancesTable and RegionHealthTable in, catalogue events
// on the bus out.
package eventsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/eventbus"
	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"github.com/gamefabric-alloc/allocsvc/shared/store/regiontable"
)

// Handler is EventsFunction. It answers with the batch item failures
// Lambda's event source mapping expects (ReportBatchItemFailures): the
// first record whose events could not all be put, so Lambda retries from
// it -- in order, never skipping one -- and, once its retries are spent,
// sends the batch's description to the on-failure destination.
//
// kept holds what the front doors keep: matches is nil when the
// deployment keeps no FlexMatch matches, placements when it keeps no
// GameLift placements.
func Handler(cfg config.Events, bus eventbus.API, kept Kept, emf *metrics.EMF, log *slog.Logger) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	p := publisher{bus: eventbus.Publisher{API: bus, Bus: cfg.Bus, Attempts: defaults.EventPublishAttempts, Backoff: defaults.EventPublishBackoff},
		metrics: metrics.Events{EMF: emf}, kept: kept, matchEvent: cfg.MatchmakingEventName}
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		ctx = logging.WithLogger(ctx, log)
		return p.publish(ctx, ev.Records), nil
	}
}

// Kept is what the front doors keep beside the records.
type Kept struct {
	Matches    Matches
	Placements Placements
}

type publisher struct {
	bus        eventbus.Publisher
	metrics    metrics.Events
	kept       Kept
	matchEvent string
}

// publish derives every record's events, puts them in order and reports
// the first record not done.
func (p publisher) publish(ctx context.Context, records []events.DynamoDBEventRecord) events.DynamoDBEventResponse {
	log := logging.FromContext(ctx)
	var evs []eventcatalog.Event
	var owner []int // owner[i] is the record event i came from
	failedAt, unreadable := len(records), 0
	for i, r := range records {
		derived, err := derive(r)
		if err == nil {
			derived, err = matchEvents(ctx, p.kept.Matches, p.matchEvent, derived)
		}
		if err == nil {
			derived, err = placementEvents(ctx, p.kept.Placements, derived)
		}
		if err != nil {
			// A record that cannot be read is not dropped: Lambda retries
			// it, then sets it aside in the on-failure destination.
			log.Error("stream record cannot become events; handing it back", "eventID", r.EventID,
				"sequenceNumber", r.Change.SequenceNumber, "source", r.EventSourceArn, "error", err)
			failedAt, unreadable = i, 1
			break
		}
		evs = append(evs, derived...)
		for range derived {
			owner = append(owner, i)
		}
	}
	n, err := p.bus.Publish(ctx, evs)
	if err != nil {
		failedAt = min(failedAt, owner[n])
		log.Error("events not put on the bus; handing their stream record back", "sequenceNumber", records[owner[n]].Change.SequenceNumber,
			"event", evs[n].Type, "idempotencyKey", evs[n].Key(), "error", err)
	}
	done := 0
	for done < len(evs) && owner[done] < failedAt {
		done++
	}
	p.metrics.Published(evs[:done], len(evs)-done+unreadable)
	log.Debug("stream records published", "records", failedAt, "of", len(records), "events", done)
	if failedAt == len(records) {
		return events.DynamoDBEventResponse{}
	}
	return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: records[failedAt].Change.SequenceNumber}}}
}

// derive returns the events of one stream record. Keys say which table it
// comes from; REMOVE (TTL expiry of a finished record) is no event.
func derive(r events.DynamoDBEventRecord) ([]eventcatalog.Event, error) {
	if r.EventName == string(events.DynamoDBOperationTypeRemove) {
		return nil, nil
	}
	cur, err := image(r.Change.NewImage)
	if err != nil {
		return nil, fmt.Errorf("new image: %w", err)
	}
	old, err := image(r.Change.OldImage)
	if err != nil {
		return nil, fmt.Errorf("old image: %w", err)
	}
	switch {
	case hasKey(r, store.GameInstanceKey):
		return change(old, cur, store.DecodeGameInstance, eventcatalog.FromGameInstance)
	case hasKey(r, store.RegionKey):
		return change(old, cur, regiontable.Decode, eventcatalog.FromRegion)
	}
	return nil, errUnknownTable
}

// change decodes a record's images with decode and derives its events;
// an absent old image (INSERT) is nil.
func change[T any](old, cur map[string]types.AttributeValue, decode func(map[string]types.AttributeValue) (T, error),
	events func(*T, T) []eventcatalog.Event) ([]eventcatalog.Event, error) {
	after, err := decode(cur)
	if err != nil {
		return nil, err
	}
	if len(old) == 0 {
		return events(nil, after), nil
	}
	before, err := decode(old)
	if err != nil {
		return nil, fmt.Errorf("old image: %w", err)
	}
	return events(&before, after), nil
}

var errUnknownTable = errors.New("keys are neither a game instance's nor a region's")

func hasKey(r events.DynamoDBEventRecord, name string) bool {
	_, ok := r.Change.Keys[name]
	return ok
}
