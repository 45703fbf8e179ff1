package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Integrity is the exactly-once check: the stand-in's log of answered
// calls against the stored records and the answers the callers got, on a
// stack with Pool sandboxes per function. Instances got a 201;
// DoubleAllocated were given more than one server by the stand-in (must
// be zero); Mismatched got a 201 without exactly one upstream allocation
// of the server they were given, stored in an Allocated record;
// Unanswered were allocated once although no caller got a 201 (e.g. cut
// off by the time cap), which is allowed. Problems are the first few.
type Integrity struct {
	Pool, Instances, DoubleAllocated, Mismatched, Unanswered int
	Problems                                                 []string
}

// OK reports whether no game instance got two servers and every 201
// matches its record.
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

// storedServer is the part of a stored record the check compares.
type storedServer struct {
	ID     string `dynamodbav:"gameInstanceId"`
	State  string `dynamodbav:"state"`
	Server struct {
		Address string `dynamodbav:"address"`
	} `dynamodbav:"server"`
}

// scanServers reads every record's state and server address.
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

// RaceResult is the same game instance requested by several callers at
// once: Created instances were answered 201 by exactly one caller,
// MultipleCreated by more than one.
type RaceResult struct {
	Instances, CallersEach   int
	Outcomes                 Counts
	Created, MultipleCreated int
}

// MeasureRace releases callersEach requests for each of instances game
// instances at the same moment; exactly one may allocate, the others must
// get 409 ALLOCATION_IN_PROGRESS or the replayed 200.
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
