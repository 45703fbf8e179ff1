package eventsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
)

// bus records what was put; it refuses entries whose detail contains
// refuse. moto's EventBridge (the end-to-end tests') never refuses one.
type bus struct {
	put    []string // detail-type idempotencyKey
	refuse string
}

func (b *bus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		var d struct{ IdempotencyKey string }
		_ = json.Unmarshal([]byte(aws.ToString(e.Detail)), &d)
		if b.refuse != "" && strings.Contains(aws.ToString(e.Detail), b.refuse) {
			out.Entries = append(out.Entries, types.PutEventsResultEntry{ErrorCode: aws.String("InternalFailure")})
			continue
		}
		b.put = append(b.put, aws.ToString(e.DetailType)+" "+d.IdempotencyKey)
		out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String("e")})
	}
	return out, nil
}

// instance is a game-instance stream record in Lambda's JSON form.
func instance(seq, name, id string, oldState string, oldVersion int, newState string, newVersion int) string {
	img := func(state string, version int) string {
		return fmt.Sprintf(`{"gameInstanceId":{"S":%q},"state":{"S":%q},"version":{"N":"%d"},"updatedAt":{"S":"2026-11-23T12:00:0%dZ"},"partnerGameTokenHash":{"S":"secret-hash"}}`,
			id, state, version, version)
	}
	old := ""
	if oldState != "" {
		old = `,"OldImage":` + img(oldState, oldVersion)
	}
	newImg := ""
	if newState != "" {
		newImg = `,"NewImage":` + img(newState, newVersion)
	}
	return fmt.Sprintf(`{"eventID":"e%s","eventName":%q,"eventSource":"aws:dynamodb","dynamodb":{"Keys":{"gameInstanceId":{"S":%q}},"SequenceNumber":%q%s%s}}`,
		seq, name, id, seq, newImg, old)
}

const regionUnhealthy = `{"eventID":"r","eventName":"MODIFY","dynamodb":{"Keys":{"region":{"S":"eu"}},"SequenceNumber":"50",
 "OldImage":{"region":{"S":"eu"},"state":{"S":"Deployed"},"since":{"S":"2026-11-23T11:00:00Z"}},
 "NewImage":{"region":{"S":"eu"},"state":{"S":"Unhealthy"},"since":{"S":"2026-11-23T12:00:00Z"},"reason":{"S":"AllocationFailures"},"consecutiveFailures":{"N":"3"}}}}`

func TestHandler(t *testing.T) {
	allocated := instance("10", "MODIFY", "g1", "Allocating", 1, "Allocated", 2)
	heartbeat := instance("11", "MODIFY", "g1", "Linked", 3, "Linked", 4)
	linked := instance("12", "MODIFY", "g1", "Allocated", 2, "Linked", 3)
	claim := instance("13", "INSERT", "g2", "", 0, "Allocating", 1)
	expired := instance("14", "REMOVE", "g0", "Ended", 9, "", 0)
	poison := `{"eventID":"p","eventName":"MODIFY","dynamodb":{"Keys":{"gameInstanceId":{"S":"gp"}},"SequenceNumber":"20","NewImage":{"gameInstanceId":{"S":"gp"}}}}`
	unknown := `{"eventID":"u","eventName":"INSERT","dynamodb":{"Keys":{"pk":{"S":"x"}},"SequenceNumber":"21","NewImage":{"pk":{"S":"x"}}}}`
	tests := []struct {
		name    string
		records []string
		refuse  string
		want    []string
		failed  string
		// notPut is the EventsPublishFailed metric.
		notPut int
	}{
		{"transitions only, in order", []string{claim, allocated, heartbeat, linked, expired}, "",
			[]string{"GameServerAllocated g1:2:GameServerAllocated", "GameServerLinked g1:3:GameServerLinked"}, "", 0},
		{"region health", []string{regionUnhealthy}, "", []string{"RegionHealthChanged eu:Unhealthy:1795435200000"}, "", 0},
		{"an unreadable record is handed back, nothing after it is put", []string{allocated, poison, linked}, "",
			[]string{"GameServerAllocated g1:2:GameServerAllocated"}, "20", 1},
		{"a record of no known table is handed back", []string{unknown, allocated}, "", nil, "21", 1},
		{"a refused event hands back its record", []string{allocated, linked}, "Linked",
			[]string{"GameServerAllocated g1:2:GameServerAllocated"}, "12", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev events.DynamoDBEvent
			if err := json.Unmarshal([]byte(`{"Records":[`+strings.Join(tt.records, ",")+`]}`), &ev); err != nil {
				t.Fatal(err)
			}
			b := &bus{refuse: tt.refuse}
			var out, emf bytes.Buffer
			h := Handler(config.Events{Bus: "bus"}, b, Kept{}, metrics.NewEMF(&emf), slog.New(slog.NewJSONHandler(&out, nil)))
			res, err := h(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(b.put, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("put:\n%s\nwant:\n%s", strings.Join(b.put, "\n"), strings.Join(tt.want, "\n"))
			}
			failed := ""
			for _, f := range res.BatchItemFailures {
				failed += f.ItemIdentifier
			}
			if failed != tt.failed {
				t.Errorf("batch item failures %q, want %q", failed, tt.failed)
			}
			if want := fmt.Sprintf(`"EventsPublishFailed":%d,`, tt.notPut); !strings.Contains(emf.String(), want) {
				t.Errorf("metrics lack %s: %s", want, emf.String())
			}
			if strings.Contains(out.String(), "secret-hash") {
				t.Errorf("a token hash reached the log: %s", out.String())
			}
		})
	}
}
