package eventsapp

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxDepth bounds how deep an image's nested maps and lists are followed:
// DynamoDB allows 32 levels.
const maxDepth = 32

// image converts a stream record's image (Lambda's JSON form) to the SDK's
// attribute values, which the store decodes.
func image(in map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	return imageMap(in, 0)
}

func imageMap(in map[string]events.DynamoDBAttributeValue, depth int) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(in))
	for k, v := range in {
		av, err := attribute(v, depth)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func attribute(v events.DynamoDBAttributeValue, depth int) (types.AttributeValue, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		list := make([]types.AttributeValue, 0, len(v.List()))
		for i, e := range v.List() {
			av, err := attribute(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			list = append(list, av)
		}
		return &types.AttributeValueMemberL{Value: list}, nil
	case events.DataTypeMap:
		m, err := imageMap(v.Map(), depth+1)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %d", v.DataType())
}
