package placementqueue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

type sent struct {
	in  *sqs.SendMessageInput
	err error
}

func (s *sent) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	s.in = in
	return &sqs.SendMessageOutput{}, s.err
}

func TestEnqueueRoundTripsAndRoundsTheDelayUp(t *testing.T) {
	for _, tc := range []struct {
		delay time.Duration
		want  int32
	}{{0, 0}, {time.Millisecond, 1}, {1500 * time.Millisecond, 2}, {15 * time.Second, 15}, {time.Hour, 900}, {-time.Second, 0}} {
		api := &sent{}
		m := allocation.QueuedPlacement{GameInstanceID: "gi-1", Ticket: "t", Request: allocation.Request{GameInstanceID: "gi-1", DesiredRegion: "eu"}}
		if err := (Queue{API: api, URL: "https://q"}).Enqueue(context.Background(), m, tc.delay); err != nil {
			t.Fatal(err)
		}
		if api.in.DelaySeconds != tc.want || *api.in.QueueUrl != "https://q" {
			t.Errorf("delay %s: sent DelaySeconds %d to %s, want %d", tc.delay, api.in.DelaySeconds, *api.in.QueueUrl, tc.want)
		}
		got, err := Decode(*api.in.MessageBody)
		if err != nil || got.GameInstanceID != "gi-1" || got.Ticket != "t" || got.Request.DesiredRegion != "eu" {
			t.Errorf("decoded %+v, %v", got, err)
		}
	}
}

func TestEnqueueErrorsNeverQuoteTheBody(t *testing.T) {
	api := &sent{err: errors.New("sqs down")}
	m := allocation.QueuedPlacement{GameInstanceID: "gi-1", Ticket: "t", Request: allocation.Request{PartnerGameToken: "secret-token-secret-token-secret-token"}}
	err := (Queue{API: api, URL: "https://q"}).Enqueue(context.Background(), m, time.Second)
	if err == nil || strings.Contains(err.Error(), "secret-token") || !strings.Contains(err.Error(), "gi-1") {
		t.Fatalf("error %v", err)
	}
}

func TestDecodeRefusesWhatNoServiceSent(t *testing.T) {
	for _, body := range []string{"", "{", `{"gameInstanceId":"gi"}`, `{"ticket":"t"}`, `[]`} {
		if _, err := Decode(body); err == nil {
			t.Errorf("%q decoded", body)
		}
	}
}
