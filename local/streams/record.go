package streams

import (
	"encoding/json"
	"fmt"
	"math/big"
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
		EventVersion:   aws.ToString(r.EventVersion),
		EventSource:    "aws:dynamodb",
		AWSRegion:      region,
		EventSourceARN: streamARN,
	}
	if out.EventVersion == "" {
		out.EventVersion = "1.1"
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
	var err error
	if out.DynamoDB.Keys, err = image(d.Keys); err != nil {
		return out, fmt.Errorf("record %s Keys: %w", out.EventID, err)
	}
	if out.DynamoDB.NewImage, err = image(d.NewImage); err != nil {
		return out, fmt.Errorf("record %s NewImage: %w", out.EventID, err)
	}
	if out.DynamoDB.OldImage, err = image(d.OldImage); err != nil {
		return out, fmt.Errorf("record %s OldImage: %w", out.EventID, err)
	}
	return out, nil
}

func image(m map[string]types.AttributeValue) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		j, err := AttributeJSON(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = j
	}
	return out, nil
}

// AttributeJSON is v in DynamoDB JSON ({"S": "x"}, {"N": "1"}, {"M": {...}},
// binary as base64), the form Lambda's stream events carry.
func AttributeJSON(v types.AttributeValue) (map[string]any, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}, nil
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value}, nil // []byte marshals as base64
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}, nil
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}, nil
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}, nil
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}, nil
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}, nil
	case *types.AttributeValueMemberL:
		items := make([]any, 0, len(v.Value))
		for i, item := range v.Value {
			j, err := AttributeJSON(item)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			items = append(items, j)
		}
		return map[string]any{"L": items}, nil
	case *types.AttributeValueMemberM:
		m, err := image(v.Value)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]any{}
		}
		return map[string]any{"M": m}, nil
	}
	return nil, fmt.Errorf("unsupported attribute value %T", v)
}

// generic is r as decoded JSON, the document filter patterns match.
func (r Record) generic() (map[string]any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return DecodeDocument(b)
}

// compareSeq orders DynamoDB Streams sequence numbers, which are decimal
// strings of up to 40 digits (too long for an int64).
func compareSeq(a, b string) int {
	x, okx := new(big.Int).SetString(a, 10)
	y, oky := new(big.Int).SetString(b, 10)
	if !okx || !oky {
		switch {
		case len(a) != len(b):
			return len(a) - len(b)
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	return x.Cmp(y)
}
