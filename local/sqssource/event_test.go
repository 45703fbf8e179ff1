package sqssource

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

func TestEventIsLambdasSQSEvent(t *testing.T) {
	msgs := []types.Message{{
		MessageId: aws.String("m1"), ReceiptHandle: aws.String("rh1"), Body: aws.String(`{"gameInstanceId":"gi-1"}`),
		MD5OfBody:  aws.String("md5"),
		Attributes: map[string]string{"ApproximateReceiveCount": "2", "SentTimestamp": "1700000000000"},
		MessageAttributes: map[string]types.MessageAttributeValue{
			"kind": {DataType: aws.String("String"), StringValue: aws.String("placement")},
		},
	}, {MessageId: aws.String("m2"), ReceiptHandle: aws.String("rh2"), Body: aws.String("second")}}
	b, err := Event(msgs, "arn:aws:sqs:us-east-1:123456789012:q", "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	// The wire form, as a handler's JSON decoding sees it.
	var raw struct {
		Records []map[string]any `json:"Records"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || len(raw.Records) != 2 {
		t.Fatalf("event %s: %v", b, err)
	}
	first := raw.Records[0]
	for key, want := range map[string]any{
		"messageId": "m1", "receiptHandle": "rh1", "body": `{"gameInstanceId":"gi-1"}`, "md5OfBody": "md5",
		"eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q", "awsRegion": "us-east-1",
		"attributes": map[string]any{"ApproximateReceiveCount": "2", "SentTimestamp": "1700000000000"},
		"messageAttributes": map[string]any{"kind": map[string]any{
			"stringValue": "placement", "dataType": "String", "stringListValues": []any{}, "binaryListValues": []any{}}},
	} {
		if !reflect.DeepEqual(first[key], want) {
			t.Errorf("%s = %#v, want %#v", key, first[key], want)
		}
	}
	// A message without attributes still has the (empty) objects.
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	if second := ev.Records[1]; second.Attributes == nil || second.MessageAttributes == nil || second.Body != "second" {
		t.Errorf("second record %+v", second)
	}
}
