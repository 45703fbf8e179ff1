package store

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Key attributes of the two tables whose changes become events: a stream
// record's Keys say which table's item it is.
const (
	GameInstanceKey = "gameInstanceId"
	RegionKey       = "region"
)

// DecodeGameInstance reads a game-instance item image, as DynamoDB Streams
// carries it, into its record.
func DecodeGameInstance(av map[string]types.AttributeValue) (gameinstance.Record, error) {
	r, err := decode(av)
	if err == nil && (r.GameInstanceID == "" || r.State == "") {
		err = errors.New("decode record: image without gameInstanceId or state")
	}
	return r, err
}
