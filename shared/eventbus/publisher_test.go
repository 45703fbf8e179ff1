package eventbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// fakeBus stands in for EventBridge's per-entry refusals, which moto (the
// end-to-end tests' EventBridge) never produces. refuse decides, per call
// and entry key, whether EventBridge refuses it.
type fakeBus struct {
	calls  [][]string // the idempotency keys of each call
	refuse func(call int, key string) bool
	fail   error
}

func (f *fakeBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	call := len(f.calls)
	var keys []string
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		key := aws.ToString(e.Detail)
		key = key[strings.Index(key, `"idempotencyKey":"`)+18:]
		key = key[:strings.IndexByte(key, '"')]
		keys = append(keys, key)
		if f.refuse != nil && f.refuse(call, key) {
			out.Entries = append(out.Entries, types.PutEventsResultEntry{ErrorCode: aws.String("ThrottlingException"), ErrorMessage: aws.String("slow down")})
		} else {
			out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String("id-" + key)})
		}
	}
	f.calls = append(f.calls, keys)
	return out, f.fail
}

func events(n int, detailBytes int) []eventcatalog.Event {
	var evs []eventcatalog.Event
	for i := range n {
		d := &eventcatalog.InstanceDetail{IdempotencyKey: fmt.Sprintf("k%d", i), GameInstanceID: strings.Repeat("g", detailBytes)}
		evs = append(evs, eventcatalog.Event{Type: eventcatalog.GameServerLinked, Instance: d})
	}
	return evs
}

func TestPublish(t *testing.T) {
	tests := []struct {
		name      string
		evs       []eventcatalog.Event
		refuse    func(call int, key string) bool
		fail      error
		wantN     int
		wantErr   string
		wantCalls []int // entries per call
	}{
		{"ten per call", events(23, 10), nil, nil, 23, "", []int{10, 10, 3}},
		{"256 KB per call", events(5, 100<<10), nil, nil, 5, "", []int{2, 2, 1}},
		{"refused entries are put again, alone", events(4, 10),
			func(call int, key string) bool { return call == 0 && (key == "k1" || key == "k3") }, nil, 4, "", []int{4, 2}},
		{"still refused: stop at the first", events(12, 10),
			func(_ int, key string) bool { return key == "k2" }, nil, 2, "refused 1 events: ThrottlingException", []int{10, 1, 1}},
		{"a failed call stops the batch", events(3, 10), nil, errors.New("connection reset"), 0, "connection reset", []int{3}},
		{"too large alone", events(1, 300<<10), nil, nil, 0, "256 KB", nil},
		// Nothing is put before every entry is built: the events before a
		// too large one are not on the bus either.
		{"too large after others", append(events(3, 10), events(1, 300<<10)...), nil, nil, 0, "256 KB", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := &fakeBus{refuse: tt.refuse, fail: tt.fail}
			n, err := Publisher{API: bus, Bus: "b", Attempts: 3}.Publish(context.Background(), tt.evs)
			if n != tt.wantN || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Publish = %d, %v; want %d, %q", n, err, tt.wantN, tt.wantErr)
			}
			var calls []int
			for _, c := range bus.calls {
				calls = append(calls, len(c))
			}
			if fmt.Sprint(calls) != fmt.Sprint(tt.wantCalls) {
				t.Fatalf("entries per call %v, want %v", calls, tt.wantCalls)
			}
		})
	}
}

func TestPublishKeepsOrder(t *testing.T) {
	bus := &fakeBus{}
	evs := eventcatalog.FromGameInstance(&gameinstance.Record{GameInstanceID: "g", State: gameinstance.StateAllocating},
		gameinstance.Record{GameInstanceID: "g", State: gameinstance.StateAllocated, Version: 2,
			Attempts: []gameinstance.Attempt{{Region: "eu", SuspectedOrphan: true}, {Region: "us", Status: 200}}})
	if _, err := (Publisher{API: bus, Bus: "b"}).Publish(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(bus.calls); got != "[[g:2:GameServerAllocated g:2:SuspectedOrphan]]" {
		t.Fatalf("calls %s", got)
	}
}
