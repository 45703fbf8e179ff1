package streams

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// maxPagesPerShard bounds ReadAll on one shard.
const maxPagesPerShard = 10_000

// ReadAll reads every record of the stream now in it, every shard from its
// trim horizon (no mapping, no filter), and returns in Lambda's shape those
// whose string key attribute key passes keep. For tools that look at what
// a stream holds: a redelivery, a cost measurement.
func ReadAll(ctx context.Context, api StreamsAPI, streamARN, region, key string, keep func(string) bool) ([]Record, error) {
	shards, err := describe(ctx, api, streamARN)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, sh := range shards {
		it, err := api.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(streamARN), ShardId: sh.ShardId,
			ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return nil, err
		}
		for iter, pages := it.ShardIterator, 0; iter != nil && pages < maxPagesPerShard; pages++ {
			page, err := api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				return nil, err
			}
			for _, r := range page.Records {
				if r.Dynamodb == nil {
					continue
				}
				if k, ok := r.Dynamodb.Keys[key].(*types.AttributeValueMemberS); ok && keep(k.Value) {
					rec, _ := FromStream(r, region, streamARN) // fails only without a dynamodb member
					out = append(out, rec)
				}
			}
			// An open shard answers an empty page at its end.
			if len(page.Records) == 0 {
				break
			}
			iter = page.NextShardIterator
		}
	}
	return out, nil
}
