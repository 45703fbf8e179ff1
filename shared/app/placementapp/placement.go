// Package placementapp is PlacementFunction's composition root: the
// placement queue's SQS messages in, one queued placement's next attempt
// each, through the same allocation use case as POST /v1/allocations.
package placementapp

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/placementqueue"
)

// Resumer runs one queued placement's next attempt (allocation.Service).
type Resumer interface {
	Resume(ctx context.Context, m allocation.QueuedPlacement) error
}

// ErrNoQueue: the function runs the placement queue, so it must know it.
var ErrNoQueue = errors.New("PLACEMENT_QUEUE_URL is required by PlacementFunction: it sends each placement's next message")

// New wires the function from its configuration and clients.
func New(cfg config.Allocate, c allocateapp.Clients, log *slog.Logger) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	if cfg.PlacementQueueURL == "" {
		return nil, ErrNoQueue
	}
	records, servers := app.Records(c.DynamoDB, cfg.GameInstancesTable, cfg.GameServersTable, cfg.Allocation.Retention)
	return Handler(allocateapp.Service(cfg, c, records, servers), log), nil
}

// Handler answers Lambda's SQS event with the messages to deliver again
// (ReportBatchItemFailures): those whose attempt could not be settled, or
// that cannot be read at all (after the queue's maxReceiveCount they move
// to the dead-letter queue, where an alarm sees them). The batch's
// placements run side by side, each within its own allocation budget, so
// a batch takes as long as its slowest placement, not their sum.
func Handler(svc Resumer, log *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		ctx = logging.WithLogger(ctx, log)
		failed := make([]bool, len(ev.Records))
		var wg sync.WaitGroup
		for i, msg := range ev.Records {
			wg.Add(1)
			go func() {
				defer wg.Done()
				failed[i] = !settled(ctx, svc, msg)
			}()
		}
		wg.Wait()
		var res events.SQSEventResponse
		for i, f := range failed {
			if f {
				res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
			}
		}
		return res, nil
	}
}

// settled runs one message; false hands it back to the queue.
func settled(ctx context.Context, svc Resumer, msg events.SQSMessage) bool {
	log := logging.FromContext(ctx).With("messageId", msg.MessageId, "receiveCount", msg.Attributes["ApproximateReceiveCount"])
	m, err := placementqueue.Decode(msg.Body)
	if err != nil {
		log.Error("placement message cannot be read; handing it back (it ends in the dead-letter queue)", "error", err)
		return false
	}
	if err := svc.Resume(logging.WithLogger(ctx, log), m); err != nil {
		log.Error("queued placement not settled; the message is delivered again", "gameInstanceId", m.GameInstanceID, "error", err)
		return false
	}
	return true
}
