package store

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

// Encode is rec as the table stores it, health index keys included. The
// service writes through UpdateItem; Encode is for loading records in bulk
// (BatchWriteItem), as the sweep's load test and benchmark do, so that what
// they load is shaped exactly like what the service writes.
func Encode(rec allocation.Record) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(toItem(rec))
}
