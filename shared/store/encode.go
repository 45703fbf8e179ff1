package store

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Encode is rec as the table stores it, health index keys included: what
// every write sets (update), what a write recognises as its own (written),
// and what bulk loads write (BatchWriteItem in the sweep's load test and
// benchmark), so all three are shaped alike.
func Encode(rec gameinstance.Record) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(toItem(rec))
}
