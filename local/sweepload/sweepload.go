// Package sweepload loads a game instances table with due instances and
// sweeps it run after run, as the scheduled HealthSweepFunction would, each
// run under its own deadline. The 20,000-instance integration test and
// `make bench` share it, so the figure in docs/benchmarks.md and the test
// measure the same thing.
package sweepload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// LambdaTimeout is HealthSweepFunction's Timeout in template.yaml (a test
// keeps the two equal).
const LambdaTimeout = 60 * time.Second

// LinkedEvery: every LinkedEvery-th seeded instance is Linked and past its
// heartbeat deadline; the others are Allocated and past their link deadline.
const LinkedEvery = 5

// seedWriters BatchWriteItem calls run at once while seeding.
const seedWriters = 8

// DB is the part of the DynamoDB client seeding uses.
type DB interface {
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// Seed writes n records due at now under policy, as the service would have
// left them, and returns their ids (prefix-0 … prefix-(n-1)).
func Seed(ctx context.Context, db DB, table, prefix string, n int, policy lifecycle.Policy, now time.Time) ([]string, error) {
	ids := make([]string, n)
	batches := make(chan []types.WriteRequest)
	errs := make(chan error, seedWriters)
	var wg sync.WaitGroup
	for range seedWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if err := writeBatch(ctx, db, table, b); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
	batch := make([]types.WriteRequest, 0, 25)
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		var av map[string]types.AttributeValue
		if av, err = store.Encode(dueRecord(ids[i], i%LinkedEvery == 0, policy, now)); err != nil {
			break
		}
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		if len(batch) == 25 || i == n-1 {
			select {
			case batches <- batch:
			case err = <-errs:
			}
			if err != nil {
				break
			}
			batch = make([]types.WriteRequest, 0, 25)
		}
	}
	close(batches)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	return ids, err
}

// dueRecord is an allocation an hour old whose server never linked, or
// linked and stopped heartbeating, so Policy.Review marks it at now.
func dueRecord(id string, linked bool, p lifecycle.Policy, now time.Time) gameinstance.Record {
	at := now.Add(-time.Hour)
	rec := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocated, Region: "us-west", Version: 2,
		Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west", GameServerVersion: "prag::sample-game-armada-set"},
		Environment: "prag", ArmadaSet: "sample-game-armada-set", ClaimID: "claim-" + id,
		PartnerGameTokenHash: gameinstance.HashToken("token-" + id), LeaseExpiresAt: at.Add(time.Minute),
		Server:    &gameinstance.Server{Address: "10.0.0.7:7777", IP: "10.0.0.7", Ports: map[string]int{"game": 7777}},
		CreatedAt: at, UpdatedAt: at, HealthDeadline: at.Add(p.LinkTimeout)}
	if linked {
		rec.State, rec.Version, rec.LinkedAt = gameinstance.StateLinked, 4, at.Add(5*time.Second)
		rec.LinkInfo = &gameinstance.LinkInfo{Address: "10.0.0.7:7777", Ports: map[string]int{"game": 7777}}
		rec.LastHeartbeatAt = at.Add(time.Minute)
		rec.UpdatedAt = rec.LastHeartbeatAt
		rec.HealthDeadline = rec.LastHeartbeatAt.Add(p.Period * time.Duration(p.FailureThreshold))
	}
	return rec
}

// writeBatch writes one batch, again for what DynamoDB leaves unprocessed.
func writeBatch(ctx context.Context, db DB, table string, reqs []types.WriteRequest) error {
	for attempt := 0; len(reqs) > 0; attempt++ {
		if attempt == 10 {
			return fmt.Errorf("seed %s: %d items still unprocessed after %d attempts", table, len(reqs), attempt)
		}
		out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: reqs}})
		if err != nil {
			return fmt.Errorf("seed %s: %w", table, err)
		}
		reqs = out.UnprocessedItems[table]
		if len(reqs) > 0 {
			if err := wait.Sleep(ctx, time.Duration(attempt+1)*50*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// States counts the stored records of ids by state and reason, e.g.
// "Unhealthy/LinkTimeout", with consistent reads in batches of 100.
func States(ctx context.Context, db interface {
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}, table string, ids []string) (map[string]int, error) {
	counts := map[string]int{}
	for start := 0; start < len(ids); start += 100 {
		var keys []map[string]types.AttributeValue
		for _, id := range ids[start:min(start+100, len(ids))] {
			keys = append(keys, map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: id}})
		}
		for len(keys) > 0 {
			out, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: {
				Keys: keys, ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("#s, unhealthyReason"),
				ExpressionAttributeNames: map[string]string{"#s": "state"}}}})
			if err != nil {
				return counts, err
			}
			for _, item := range out.Responses[table] {
				counts[str(item["state"])+"/"+str(item["unhealthyReason"])]++
			}
			keys = out.UnprocessedKeys[table].Keys
		}
	}
	return counts, nil
}

func str(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
