package placementapp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// resumer settles each game instance as scripted, taking d each time.
type resumer struct {
	errs    map[string]error
	d       time.Duration
	running atomic.Int32
	most    atomic.Int32
}

func (r *resumer) Resume(_ context.Context, m allocation.QueuedPlacement) error {
	n := r.running.Add(1)
	defer r.running.Add(-1)
	for old := r.most.Load(); n > old && !r.most.CompareAndSwap(old, n); old = r.most.Load() {
	}
	time.Sleep(r.d)
	return r.errs[m.GameInstanceID]
}

func TestHandlerHandsBackWhatItCouldNotSettle(t *testing.T) {
	r := &resumer{errs: map[string]error{"gi-down": errors.New("store down")}, d: 50 * time.Millisecond}
	h := Handler(r, logging.New(io.Discard, slog.LevelDebug))
	msg := func(id, body string) events.SQSMessage { return events.SQSMessage{MessageId: id, Body: body} }
	ev := events.SQSEvent{Records: []events.SQSMessage{
		msg("m1", `{"gameInstanceId":"gi-ok","ticket":"t","request":{}}`),
		msg("m2", `{"gameInstanceId":"gi-down","ticket":"t","request":{}}`),
		msg("m3", `not json`),
		msg("m4", `{"gameInstanceId":"gi-ok2","ticket":"t","request":{}}`),
	}}
	start := time.Now()
	res, err := h(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"m2", "m3"}) {
		t.Fatalf("batch item failures %v, want the unsettled and the unreadable message", got)
	}
	// The batch's placements run side by side, not one after another.
	if r.most.Load() != 3 || time.Since(start) > 3*r.d {
		t.Fatalf("%d at once, %s for the batch", r.most.Load(), time.Since(start))
	}
}

func TestNewNeedsTheQueue(t *testing.T) {
	if _, err := New(config.Allocate{GameInstancesTable: "t"}, allocateapp.Clients{}, logging.New(io.Discard, slog.LevelInfo)); !errors.Is(err, ErrNoQueue) {
		t.Fatalf("err = %v", err)
	}
}
