package streams

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Record is one stream record as Lambda hands it to a function (one element
// of a DynamoDBEvent's Records), images in DynamoDB JSON.
type Record struct {
	EventID        string        `json:"eventID"`
	EventName      string        `json:"eventName"`
	EventVersion   string        `json:"eventVersion"`
	EventSource    string        `json:"eventSource"`
	AWSRegion      string        `json:"awsRegion"`
	DynamoDB       StreamRecord  `json:"dynamodb"`
	EventSourceARN string        `json:"eventSourceARN"`
	UserIdentity   *UserIdentity `json:"userIdentity,omitempty"`
}

// StreamRecord is a record's "dynamodb" member.
type StreamRecord struct {
	// ApproximateCreationDateTime is epoch seconds, a JSON number.
	ApproximateCreationDateTime float64        `json:"ApproximateCreationDateTime"`
	Keys                        map[string]any `json:"Keys,omitempty"`
	NewImage                    map[string]any `json:"NewImage,omitempty"`
	OldImage                    map[string]any `json:"OldImage,omitempty"`
	SequenceNumber              string         `json:"SequenceNumber"`
	SizeBytes                   int64          `json:"SizeBytes"`
	StreamViewType              string         `json:"StreamViewType"`
}

// UserIdentity is set on REMOVE records made by TTL expiry.
type UserIdentity struct {
	Type        string `json:"type"`
	PrincipalID string `json:"principalId"`
}

// Event is what the function receives: Lambda's DynamoDBEvent.
type Event struct {
	Records []Record `json:"Records"`
}

// Created is the record's ApproximateCreationDateTime.
func (r Record) Created() time.Time {
	sec := int64(r.DynamoDB.ApproximateCreationDateTime)
	return time.Unix(sec, int64((r.DynamoDB.ApproximateCreationDateTime-float64(sec))*1e9)).UTC()
}

// FromStream converts a DynamoDB Streams API record into Lambda's shape.
// region is the awsRegion Lambda reports (the table's region); streamARN
// is the eventSourceARN.
func FromStream(r types.Record, region, streamARN string) (Record, error) {
	out := Record{
		EventID:        aws.ToString(r.EventID),
		EventName:      string(r.EventName),
		EventVersion:   cmp.Or(aws.ToString(r.EventVersion), "1.1"),
		EventSource:    "aws:dynamodb",
		AWSRegion:      region,
		EventSourceARN: streamARN,
	}
	if r.UserIdentity != nil {
		out.UserIdentity = &UserIdentity{Type: aws.ToString(r.UserIdentity.Type), PrincipalID: aws.ToString(r.UserIdentity.PrincipalId)}
	}
	d := r.Dynamodb
	if d == nil {
		return out, fmt.Errorf("stream record %s has no dynamodb member", out.EventID)
	}
	out.DynamoDB = StreamRecord{
		SequenceNumber: aws.ToString(d.SequenceNumber),
		SizeBytes:      aws.ToInt64(d.SizeBytes),
		StreamViewType: string(d.StreamViewType),
	}
	if d.ApproximateCreationDateTime != nil {
		// Lambda sends whole seconds, as DynamoDB Streams stores them.
		out.DynamoDB.ApproximateCreationDateTime = float64(d.ApproximateCreationDateTime.Unix())
	}
	out.DynamoDB.Keys, out.DynamoDB.NewImage, out.DynamoDB.OldImage = image(d.Keys), image(d.NewImage), image(d.OldImage)
	return out, nil
}

func image(m map[string]types.AttributeValue) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = attributeJSON(v)
	}
	return out
}

// attributeJSON is v in DynamoDB JSON ({"S": "x"}, {"N": "1"}, {"M": {...}},
// binary as base64), the form Lambda's stream events carry.
func attributeJSON(v types.AttributeValue) map[string]any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value} // []byte marshals as base64
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}
	case *types.AttributeValueMemberL:
		items := make([]any, len(v.Value))
		for i, item := range v.Value {
			items[i] = attributeJSON(item)
		}
		return map[string]any{"L": items}
	case *types.AttributeValueMemberM:
		m := image(v.Value)
		if m == nil {
			m = map[string]any{} // an empty map, not null
		}
		return map[string]any{"M": m}
	case *types.UnknownUnionMember:
		// A type newer than this SDK: its tag and its bytes (base64 in JSON).
		return map[string]any{v.Tag: v.Value}
	}
	return nil
}

// compareSeq orders DynamoDB Streams sequence numbers, which are decimal
// strings of up to 40 digits (too long for an int64), maybe zero-padded.
func compareSeq(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}
