package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ThroughputOptions bounds each load level in count and time.
type ThroughputOptions struct {
	Callers  []int
	PerLevel int
	Cap      time.Duration
}

// ThroughputLevel is Callers closed-loop callers allocating back to back.
type ThroughputLevel struct {
	PoolSize, Callers, Attempted, Created int
	Elapsed                               time.Duration
	PerSecond                             float64
	Latency                               Summary
	Outcomes                              Counts
	CPU                                   CPUUsage
}

// MeasureThroughput runs one level; every 201's server goes into created
// for the exactly-once check.
func MeasureThroughput(ctx context.Context, s *Stack, callers int, o ThroughputOptions, created *sync.Map, log io.Writer) (ThroughputLevel, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Cap)
	defer cancel()
	lvl := ThroughputLevel{PoolSize: s.PoolSize, Callers: callers, Outcomes: Counts{}}
	client := newAPIClient(s.APIURL, callers)
	run := runID()
	var next atomic.Int64
	var mu sync.Mutex
	var took []time.Duration
	var err error
	lvl.CPU, err = cpuDuring(s.Classify(), func() {
		start := time.Now()
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for n := next.Add(1); n <= int64(o.PerLevel) && ctx.Err() == nil; n = next.Add(1) {
					id := fmt.Sprintf("tp-p%d-c%d-%s-%d", s.PoolSize, callers, run, n)
					r := postAllocation(ctx, client, id, RegionOK)
					if ctx.Err() != nil && r.Err != nil {
						return // cut off by the time cap: not an outcome of the service
					}
					mu.Lock()
					lvl.Attempted++
					lvl.Outcomes[r.Outcome()]++
					if r.Status == http.StatusCreated && r.server() != "" {
						lvl.Created++
						took = append(took, r.Took)
						created.Store(id, r.server())
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		lvl.Elapsed = time.Since(start)
	})
	if err != nil {
		return lvl, err
	}
	lvl.PerSecond = float64(lvl.Created) / lvl.Elapsed.Seconds()
	lvl.Latency = Summarize(took)
	progress(log, "throughput: pool %d, %d callers: %d/%d created in %s = %.0f/s, p50 %s p99 %s; %s; machine CPU %.0f%%",
		s.PoolSize, callers, lvl.Created, lvl.Attempted, lvl.Elapsed.Round(time.Millisecond), lvl.PerSecond,
		fmtMs(lvl.Latency.P50), fmtMs(lvl.Latency.P99), lvl.Outcomes, 100*lvl.CPU.Busy)
	return lvl, nil
}

// Thresholds of the bottleneck analysis.
const (
	// busyShare: the machine CPU use above which a run is CPU-bound (other
	// processes and scheduling gaps take the rest).
	busyShare = 0.85
	// poolShare: reaching this share of the pool's ceiling means the pool binds.
	poolShare = 0.8
	// minGain: a bigger pool's gain beyond a level's run-to-run noise.
	minGain = 1.05
)

// Bottleneck is what limited throughput, by pool size in the order measured.
type Bottleneck struct {
	Pools          []PoolFinding
	First, Largest *PoolFinding
	Gain           float64
	PoolLimited    bool
}

// PoolFinding compares a pool's best level with two ceilings: the cores
// and the pool (its size over an invocation's time, measured unloaded).
type PoolFinding struct {
	Best                  ThroughputLevel
	PerInvocation         time.Duration
	Ceiling, CeilingShare float64 // allocations/s the pool allows, and Best's share of it
	CPUBound, PoolBound   bool
}

// AnalyseThroughput finds each pool size's best level and what bound it.
func AnalyseThroughput(levels []ThroughputLevel, perInvocation time.Duration) Bottleneck {
	var b Bottleneck
	index := map[int]int{}
	for _, l := range levels {
		i, ok := index[l.PoolSize]
		if !ok {
			i, index[l.PoolSize] = len(b.Pools), len(b.Pools)
			b.Pools = append(b.Pools, PoolFinding{PerInvocation: perInvocation})
		}
		if l.PerSecond > b.Pools[i].Best.PerSecond {
			b.Pools[i].Best = l
		}
	}
	for i := range b.Pools {
		f := &b.Pools[i]
		f.Ceiling = float64(f.Best.PoolSize) / perInvocation.Seconds()
		f.CeilingShare = f.Best.PerSecond / f.Ceiling
		f.CPUBound, f.PoolBound = f.Best.CPU.Busy >= busyShare, f.CeilingShare >= poolShare
	}
	if len(b.Pools) >= 2 {
		b.First, b.Largest = &b.Pools[0], &b.Pools[len(b.Pools)-1]
		b.Gain = b.Largest.Best.PerSecond / max(b.First.Best.PerSecond, 1e-9)
		b.PoolLimited = b.Gain > minGain
	}
	return b
}

// Integrity is the exactly-once check on one stack: the stand-in's answered
// calls against the stored records and the callers' 201s. Unanswered
// instances (allocated once, no 201: a caller cut off by the time cap) are
// allowed.
type Integrity struct {
	Pool, Instances, DoubleAllocated, Mismatched, Unanswered int
	Problems                                                 []string
}

// OK: no instance got two servers and every 201 matches its record.
func (i Integrity) OK() bool { return i.DoubleAllocated == 0 && i.Mismatched == 0 }

// CheckExactlyOnce compares created (game instance → server address from
// the 201) with the stand-in's calls and a scan of the table.
func CheckExactlyOnce(ctx context.Context, s *Stack, created *sync.Map) (Integrity, error) {
	res := Integrity{Pool: s.PoolSize}
	upstream := s.StandIn.UpstreamAllocations()
	records, err := scanServers(ctx, s)
	if err != nil {
		return res, err
	}
	problem := func(format string, args ...any) {
		if len(res.Problems) < 5 {
			res.Problems = append(res.Problems, fmt.Sprintf(format, args...))
		}
	}
	for id, servers := range upstream {
		if len(servers) > 1 {
			res.DoubleAllocated++
			problem("%s: %d upstream allocations %v", id, len(servers), servers)
		}
	}
	answered := map[string]bool{}
	created.Range(func(k, v any) bool {
		id, addr := k.(string), v.(string)
		answered[id] = true
		res.Instances++
		rec, ok := records[id]
		switch {
		case len(upstream[id]) != 1 || upstream[id][0] != addr:
			res.Mismatched++
			problem("%s: answered 201 with %s but the stand-in handed out %v", id, addr, upstream[id])
		case !ok || rec.State != "Allocated" || rec.Server.Address != addr:
			res.Mismatched++
			problem("%s: answered 201 with %s, stored %+v", id, addr, rec)
		}
		return true
	})
	for id, servers := range upstream {
		loadRun := strings.HasPrefix(id, "tp-") || strings.HasPrefix(id, "race-")
		if len(servers) == 1 && loadRun && !answered[id] {
			res.Unanswered++
		}
	}
	return res, nil
}

type storedServer struct {
	ID     string `dynamodbav:"gameInstanceId"`
	State  string `dynamodbav:"state"`
	Server struct {
		Address string `dynamodbav:"address"`
	} `dynamodbav:"server"`
}

func scanServers(ctx context.Context, s *Stack) (map[string]storedServer, error) {
	out := map[string]storedServer{}
	p := dynamodb.NewScanPaginator(s.DDB, &dynamodb.ScanInput{
		TableName:                aws.String(s.Tables["GameInstancesTable"]),
		ProjectionExpression:     aws.String("gameInstanceId, #s, #srv.address"),
		ExpressionAttributeNames: map[string]string{"#s": "state", "#srv": "server"},
		ConsistentRead:           aws.Bool(true),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan the game instances: %w", err)
		}
		var recs []storedServer
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &recs); err != nil {
			return nil, fmt.Errorf("decode the game instances: %w", err)
		}
		for _, r := range recs {
			out[r.ID] = r
		}
	}
	return out, nil
}

// RaceResult is the same game instance requested by several callers at once.
type RaceResult struct {
	Instances, CallersEach   int
	Outcomes                 Counts
	Created, MultipleCreated int
}

// MeasureRace releases callersEach requests for each of instances game
// instances at once; one may allocate, the others must get 409 or 200.
func MeasureRace(ctx context.Context, s *Stack, instances, callersEach int, created *sync.Map, log io.Writer) (RaceResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res := RaceResult{Instances: instances, CallersEach: callersEach, Outcomes: Counts{}}
	client := newAPIClient(s.APIURL, instances*callersEach)
	run := runID()
	var mu sync.Mutex
	for i := range instances {
		id := fmt.Sprintf("race-p%d-%s-%d", s.PoolSize, run, i)
		gate := make(chan struct{})
		wins := 0
		var wg sync.WaitGroup
		for range callersEach {
			wg.Go(func() {
				<-gate
				r := postAllocation(ctx, client, id, RegionOK)
				mu.Lock()
				defer mu.Unlock()
				res.Outcomes[r.Outcome()]++
				if r.Status == http.StatusCreated && r.server() != "" {
					wins++
					created.Store(id, r.server())
				}
			})
		}
		close(gate)
		wg.Wait()
		if wins == 1 {
			res.Created++
		} else if wins > 1 {
			res.MultipleCreated++
		}
	}
	progress(log, "race: %d game instances × %d simultaneous callers: %s", instances, callersEach, res.Outcomes)
	if ctx.Err() != nil {
		return res, fmt.Errorf("race: %w", ctx.Err())
	}
	return res, nil
}
