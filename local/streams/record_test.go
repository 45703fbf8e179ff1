package streams

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

func TestFromStreamIsWhatLambdaSends(t *testing.T) {
	created := time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)
	in := types.Record{
		EventID: aws.String("ev-1"), EventName: types.OperationTypeModify, EventVersion: aws.String("1.1"),
		Dynamodb: &types.StreamRecord{
			ApproximateCreationDateTime: aws.Time(created),
			Keys:                        map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: "gi-1"}},
			NewImage: map[string]types.AttributeValue{
				"gameInstanceId": &types.AttributeValueMemberS{Value: "gi-1"},
				"state":          &types.AttributeValueMemberS{Value: "Allocated"},
				"version":        &types.AttributeValueMemberN{Value: "2"},
				"fallbackUsed":   &types.AttributeValueMemberBOOL{Value: false},
				"server": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
					"ports": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"game": &types.AttributeValueMemberN{Value: "7777"}}},
				}},
				"attempts":             &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"region": &types.AttributeValueMemberS{Value: "us-west"}}}}},
				"candidateTokenHashes": &types.AttributeValueMemberSS{Value: []string{"aa", "bb"}},
				"blob":                 &types.AttributeValueMemberB{Value: []byte{1, 2}},
				"nothing":              &types.AttributeValueMemberNULL{Value: true},
			},
			OldImage:       map[string]types.AttributeValue{"state": &types.AttributeValueMemberS{Value: "Allocating"}},
			SequenceNumber: aws.String("000000000000000000123"),
			SizeBytes:      aws.Int64(321),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	}
	rec, err := FromStream(in, "us-east-1", "arn:aws:dynamodb:us-east-1:123456789012:table/T/stream/2026")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(Event{Records: []Record{rec}})
	if err != nil {
		t.Fatal(err)
	}
	// aws-lambda-go, what the function decodes it with, reads every field.
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	r := ev.Records[0]
	if r.EventID != "ev-1" || r.EventName != "MODIFY" || r.EventVersion != "1.1" || r.EventSource != "aws:dynamodb" || r.AWSRegion != "us-east-1" ||
		r.EventSourceArn != "arn:aws:dynamodb:us-east-1:123456789012:table/T/stream/2026" {
		t.Errorf("record %+v", r)
	}
	d := r.Change
	if !d.ApproximateCreationDateTime.Time.Equal(created) || d.SequenceNumber != "000000000000000000123" || d.SizeBytes != 321 || d.StreamViewType != "NEW_AND_OLD_IMAGES" {
		t.Errorf("dynamodb %+v", d)
	}
	if d.Keys["gameInstanceId"].String() != "gi-1" || d.NewImage["state"].String() != "Allocated" || d.OldImage["state"].String() != "Allocating" {
		t.Errorf("images %+v", d)
	}
	if d.NewImage["version"].Number() != "2" || d.NewImage["fallbackUsed"].Boolean() || !d.NewImage["nothing"].IsNull() {
		t.Errorf("scalars %+v", d.NewImage)
	}
	if d.NewImage["server"].Map()["ports"].Map()["game"].Number() != "7777" || d.NewImage["attempts"].List()[0].Map()["region"].String() != "us-west" {
		t.Errorf("nested %+v", d.NewImage)
	}
	if !reflect.DeepEqual(d.NewImage["candidateTokenHashes"].StringSet(), []string{"aa", "bb"}) || !reflect.DeepEqual(d.NewImage["blob"].Binary(), []byte{1, 2}) {
		t.Errorf("sets and binary %+v", d.NewImage)
	}
	// The raw JSON has Lambda's member names and a numeric timestamp.
	var raw map[string]any
	_ = json.Unmarshal(b, &raw)
	dyn := raw["Records"].([]any)[0].(map[string]any)["dynamodb"].(map[string]any)
	if dyn["ApproximateCreationDateTime"] != float64(created.Unix()) {
		t.Errorf("ApproximateCreationDateTime %v", dyn["ApproximateCreationDateTime"])
	}
}

func TestFromStreamTTLRemove(t *testing.T) {
	rec, err := FromStream(types.Record{
		EventID: aws.String("e"), EventName: types.OperationTypeRemove,
		UserIdentity: &types.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")},
		Dynamodb:     &types.StreamRecord{SequenceNumber: aws.String("1"), Keys: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "v"}}},
	}, "us-east-1", "arn")
	if err != nil || rec.UserIdentity == nil || rec.UserIdentity.PrincipalID != "dynamodb.amazonaws.com" || rec.EventVersion != "1.1" || rec.DynamoDB.NewImage != nil {
		t.Errorf("%+v, %v", rec, err)
	}
}

func TestCompareSeq(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"000000000000000000123", "000000000000000000122", 1},
		{"4000000000000000000000001", "4000000000000000000000001", 0},
	} {
		got := compareSeq(tc.a, tc.b)
		if (got < 0) != (tc.want < 0) || (got > 0) != (tc.want > 0) {
			t.Errorf("compareSeq(%s, %s) = %d", tc.a, tc.b, got)
		}
	}
}
