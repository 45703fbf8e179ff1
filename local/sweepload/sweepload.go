// Package sweepload loads a game instances table with due instances and
// sweeps it run after run, as the scheduled HealthSweepFunction would, each
// run under its own deadline. The 20,000-instance integration test and
// `make bench` share it, so the figure in docs/benchmarks.md and the test
// measure the same thing.
package sweepload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
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

// Seed writes n records due at now under policy, as the service would have
// left them, and returns their ids (prefix-0 … prefix-(n-1)).
func Seed(ctx context.Context, db *dynamodb.Client, table, prefix string, n int, policy lifecycle.Policy, now time.Time) ([]string, error) {
	return seed(ctx, db, table, prefix, n, func(id string, i int) gameinstance.Record {
		return dueRecord(id, i%LinkedEvery == 0, policy, now)
	})
}

// SeedLive writes n Linked instances (prefix-0 … prefix-(n-1)) linked at
// linkedAt whose servers heartbeat every policy.Period, each at its own
// offset, up to now: their last heartbeat is within a Period before now,
// their index key where the link left it. Called again with a later now,
// it writes the heartbeats since.
func SeedLive(ctx context.Context, db *dynamodb.Client, table, prefix string, n int, policy lifecycle.Policy, linkedAt, now time.Time) ([]string, error) {
	return seed(ctx, db, table, prefix, n, func(id string, i int) gameinstance.Record {
		rec := dueRecord(id, true, policy, linkedAt.Add(time.Hour-5*time.Second))
		rec.LastHeartbeatAt = now.Add(-time.Duration(i) * 997 * time.Millisecond % policy.Period)
		rec.UpdatedAt, rec.HealthDeadline = rec.LastHeartbeatAt, linkedAt.Add(policy.InitialDelay+policy.Period*time.Duration(policy.FailureThreshold))
		return rec
	})
}

// seed writes record(id, i) for ids prefix-0 … prefix-(n-1), in batches.
func seed(ctx context.Context, db *dynamodb.Client, table, prefix string, n int, record func(id string, i int) gameinstance.Record) ([]string, error) {
	ids := make([]string, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(seedWriters)
	for start := 0; start < n; start += 25 {
		batch := make([]types.WriteRequest, 0, 25)
		for i := start; i < min(start+25, n); i++ {
			ids[i] = fmt.Sprintf("%s-%d", prefix, i)
			av, err := store.Encode(record(ids[i], i))
			if err != nil {
				return ids, errors.Join(err, g.Wait())
			}
			batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		}
		g.Go(func() error { return writeBatch(gctx, db, table, batch) })
	}
	return ids, g.Wait()
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
func writeBatch(ctx context.Context, db *dynamodb.Client, table string, reqs []types.WriteRequest) error {
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
func States(ctx context.Context, db *dynamodb.Client, table string, ids []string) (map[string]int, error) {
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

// Run is one sweep run and the index around it.
type Run struct {
	Summary lifecycle.SweepSummary
	Took    time.Duration
	// DueBefore and DueAfter count the due instances per shard, read from
	// the index before and after the run (not from the run's summary).
	DueBefore, DueAfter []int
}

// PerSecond is the run's reviews per second of its wall-clock time.
func (r Run) PerSecond() float64 { return float64(r.Summary.Reviewed) / r.Took.Seconds() }

// Starved lists the shards that had due instances before the run and
// still had as many after it.
func (r Run) Starved() []int {
	var out []int
	for sh, n := range r.DueBefore {
		if n > 0 && r.DueAfter[sh] >= n {
			out = append(out, sh)
		}
	}
	return out
}

// Result is a whole drain.
type Result struct {
	Runs []Run
	Took time.Duration // the runs' time, index counts apart
	Left int           // still due after the last run
}

// Drain runs svc.Sweep until nothing is due or maxRuns have run, each run
// under a context with runTimeout, as the Lambda's timeout is. The clock
// (svc's Now) moves on a minute before each run, as the schedule's would,
// so consecutive runs start at consecutive shards. onRun, if not nil, hears
// of each run as it ends.
func Drain(ctx context.Context, svc *lifecycle.Service, clock *harness.Clock, runTimeout time.Duration, maxRuns int, onRun func(Run)) (Result, error) {
	var res Result
	due, left, err := duePerShard(ctx, svc.Store, clock.Now())
	if err != nil {
		return res, err
	}
	for len(res.Runs) < maxRuns && left > 0 {
		clock.Advance(time.Minute)
		run := Run{DueBefore: due}
		runCtx, cancel := context.WithTimeout(ctx, runTimeout)
		began := time.Now()
		run.Summary, err = svc.Sweep(runCtx)
		run.Took = time.Since(began)
		cancel()
		res.Took += run.Took
		if err != nil {
			return res, fmt.Errorf("run %d: %w", len(res.Runs)+1, err)
		}
		if run.Took > runTimeout {
			return res, fmt.Errorf("run %d took %s, past its %s timeout", len(res.Runs)+1, run.Took, runTimeout)
		}
		if due, left, err = duePerShard(ctx, svc.Store, clock.Now()); err != nil {
			return res, err
		}
		run.DueAfter = due
		res.Runs = append(res.Runs, run)
		if onRun != nil {
			onRun(run)
		}
	}
	res.Left = left
	return res, nil
}

// duePerShard counts what the index holds due at now, shard by shard and
// in all.
func duePerShard(ctx context.Context, s lifecycle.Store, now time.Time) (counts []int, total int, err error) {
	counts = make([]int, s.HealthShards())
	for sh := range counts {
		for cursor := ""; ; {
			ids, next, err := s.Due(ctx, sh, now, 1<<20, cursor)
			if err != nil {
				return nil, 0, fmt.Errorf("count due instances: %w", err)
			}
			counts[sh], total = counts[sh]+len(ids), total+len(ids)
			if cursor = next; cursor == "" {
				break
			}
		}
	}
	return counts, total, nil
}
