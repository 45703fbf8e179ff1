package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// QueuedResult is issue 23's figures.
type QueuedResult struct {
	Latency QueuedLatency
	Cost    QueuedCost
}

// QueuedCost is what a queued placement costs beyond a fresh allocation,
// one cohort per wait, and the empty long polls' USD per month.
type QueuedCost struct {
	Cohorts         []QueuedCohort
	Spacing         time.Duration
	PollersPerMonth float64
}

const (
	// costSpacing spaces a cohort's POSTs, so their messages come due apart
	// and each run is an invocation of its own, as at a low rate.
	costSpacing    = 250 * time.Millisecond
	lambdaLongPoll = 20 * time.Second // the WaitTimeSeconds of Lambda's receives
	settlePolls    = 600
)

// QueuedCohort is N placements that waited Wait on average (MeanWait,
// measured) for capacity, and what they made per placement. FreeRoomsIndex
// Queries, for which DynamoDB Local reports no units, are priced at a
// Query's least.
type QueuedCohort struct {
	Wait, MeanWait                               time.Duration
	N                                            int
	IDPrefix                                     string
	Rows                                         []RequestRow
	Runs, Invocations, GameFabricCalls, BilledMs float64
	Took                                         Summary
	SQS, Sends, Receives, Deletes                float64
	Requests, Reads, Writes, IndexWrites         float64
	RoomQueries, LogBytes                        float64
	RecordBytes                                  int
	Events                                       EventsResult
	Lines                                        []CostLine
	Logs                                         CostLine
	Extra, Total, Times                          float64
	RetryPosts                                   int
	RetryExtra, Unbatched                        float64
}

// MeasureQueuedCost runs one cohort per wait side by side, each on a rig
// of its own, then passes their stream records through the events filters.
func MeasureQueuedCost(ctx context.Context, s *Stack, o QueuedOptions, log io.Writer) (QueuedCost, error) {
	res := QueuedCost{Spacing: costSpacing, Cohorts: make([]QueuedCohort, len(o.Waits)),
		PollersPerMonth: lambdaPollers * monthSeconds / lambdaLongPoll.Seconds() * prices.SQSRequests / 1e6}
	run := runID()
	errs := make([]error, len(o.Waits))
	var wg sync.WaitGroup
	for i, w := range o.Waits {
		wg.Go(func() {
			res.Cohorts[i], errs[i] = runCohort(ctx, s, fmt.Sprintf("qc%d-%s-", int(w.Seconds()), run), w, o.CostN)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	for i := range res.Cohorts {
		c := &res.Cohorts[i]
		var err error
		if c.Events, err = MeasureEvents(ctx, s, LifecycleResult{IDPrefix: c.IDPrefix}, io.Discard); err != nil {
			return res, fmt.Errorf("queued placements' events: %w", err)
		}
		progress(log, "queued placement waiting %s: %.1f runs, %.2f invocations, %.2f SQS requests, %.2f write units, %.1f events invocations per placement",
			c.MeanWait.Round(10*time.Millisecond), c.Runs, c.Invocations, c.SQS, c.Writes, c.Events.Invocations)
	}
	return res, nil
}

// runCohort POSTs n placements costSpacing apart into a dry RegionQueued,
// gives the region back once they waited w on average, and waits until
// every one is settled and the queue is empty.
func runCohort(ctx context.Context, s *Stack, prefix string, w time.Duration, n int) (QueuedCohort, error) {
	timeout := min(int(w.Seconds())+60, 600) // a queue timeout the wait stays well within
	ctx, cancel := context.WithTimeout(ctx, w+time.Duration(n)*costSpacing+time.Minute)
	defer cancel()
	c := QueuedCohort{Wait: w, N: n, IDPrefix: prefix}
	rig, err := newPlacementRig(ctx, s, "bench-"+strings.TrimSuffix(prefix, "-"))
	if err != nil {
		return c, err
	}
	defer rig.Close()
	rig.standIn.Always(RegionQueued, noCapacity)
	began := time.Now()
	var waited time.Duration
	back := began.Add(time.Duration(n-1)*costSpacing/2 + w)
	for i := range n {
		if err := wait.Sleep(ctx, time.Until(began.Add(time.Duration(i)*costSpacing))); err != nil {
			return c, err
		}
		if _, _, err := rig.post.Post(ctx, queuedRequest(prefix+strconv.Itoa(i), timeout)); err != nil {
			return c, fmt.Errorf("queued cost: POST: %w", err)
		}
		waited += time.Until(back)
	}
	if err := wait.Sleep(ctx, time.Until(back)); err != nil {
		return c, err
	}
	rig.standIn.Always(RegionQueued, gfemu.Answer{Delay: rig.standIn.Delay})
	if err := rig.settle(ctx, s, prefix, n); err != nil {
		return c, err
	}
	c.MeanWait = waited / time.Duration(n)
	// Counted before the rig stops (the receives in flight then end cut
	// short), after a pause for the last delete's answer to reach the counter.
	_ = wait.Sleep(ctx, 100*time.Millisecond)
	c.count(rig, s.Tables["RegionHealthTable"], s.Tables["GameServersTable"])
	c.RecordBytes, err = recordSize(ctx, s, prefix+"0")
	return c, err
}

func (c *QueuedCohort) count(r *placementRig, health, rooms string) {
	n := float64(c.N)
	post, worker := Phase{N: c.N, Ops: r.post.Counter.Take()}, Phase{N: c.N, Ops: r.worker.Take()}
	c.Rows = append(requestRows(fmt.Sprintf("POST (%d)", c.N), post), requestRows(fmt.Sprintf("worker and its event source (%d)", c.N), worker)...)
	inv := r.invoker
	inv.mu.Lock()
	c.Invocations, c.Runs, c.Took = float64(inv.invocations)/n, float64(inv.records)/n, Summarize(inv.took)
	c.BilledMs = inv.billedMs / float64(max(inv.invocations, 1))
	inv.mu.Unlock()
	c.GameFabricCalls = float64(len(r.standIn.Calls())) / n
	for _, p := range []Phase{post, worker} {
		for k, op := range p.Ops {
			switch {
			case !strings.HasPrefix(k.Service, "SQS"):
			case k.Operation == "SendMessage":
				c.Sends += float64(op.Chunks) / n
			case k.Operation == "ReceiveMessage":
				c.Receives += float64(op.Chunks-op.Empty) / n
			default:
				c.Deletes += float64(op.Chunks) / n
			}
		}
	}
	c.SQS = c.Sends + c.Receives + c.Deletes
	u := dynamoPerCall(worker.Ops, c.N, func(k OpKey) bool { return k.Table != health })
	c.Requests, c.Reads, c.Writes, c.IndexWrites = u.Requests, u.Reads, u.Writes, u.IndexWrites
	c.RoomQueries = worker.on(rooms, "Query").Requests
	bytes, _ := r.logs.counts()
	c.LogBytes = float64(bytes) / n
}

// price is the cohort's bill per 1M beyond a fresh allocation (sc's
// allocation): the worker's requests, the amortised items per invocation,
// and the events beyond an allocation's one. retryAfter is a caller's wait.
func (c *QueuedCohort) price(sc Scenario, in CostInputs, allocation float64, retryAfter time.Duration) {
	p, ev := prices, c.Events
	amortised := sc.amortised(in.HealthReadRRU)
	moreInv, moreEvents := max(ev.Invocations-1, 0), max(ev.Events-1, 0)
	perEventsInv := 0.0
	if ev.Invocations > 0 {
		perEventsInv = ev.LambdaUSD / ev.Invocations
	}
	c.Lines = []CostLine{
		costLine("SQS requests", c.SQS*p.SQSRequests, "%.2f (%.2f sends, %.2f receives, %.2f deletes; 64 KB chunks) × $%.2f/1M",
			c.SQS, c.Sends, c.Receives, c.Deletes, p.SQSRequests),
		costLine("PlacementFunction requests", c.Invocations*p.LambdaRequests, "%.2f invocations (%.2f runs) × $%.2f/1M", c.Invocations, c.Runs, p.LambdaRequests),
		costLine("PlacementFunction duration", c.Invocations*c.BilledMs*lambdaUSDPerMs, "%.2f × %.1f ms billed × %g GB × $%.10f/GB-s",
			c.Invocations, c.BilledMs, p.LambdaMemoryMB/1024, p.LambdaGBSecond),
		costLine("DynamoDB reads (worker)", (c.Reads+c.RoomQueries*queryMinRRU)*p.DynamoRRU, "(%.2f RRU + %.2f free-room queries × %.1f RRU) × $%.3f/1M",
			c.Reads, c.RoomQueries, queryMinRRU, p.DynamoRRU),
		costLine("DynamoDB writes (worker)", c.Writes*p.DynamoWRU, "%.2f WRU × $%.3f/1M", c.Writes, p.DynamoWRU),
		costLine("Region-health reads and Secrets Manager, amortised", c.Invocations*amortised, "%.2f invocations × (%.3f reads × %.0f RRU + %.2g calls), as an allocation's",
			c.Invocations, sc.HealthReads, in.HealthReadRRU, sc.SecretsCalls),
		costLine("Events (EventsFunction, EventBridge)", moreInv*perEventsInv+moreEvents*p.EventBridgeEvents,
			"%.1f more invocations × $%.2f/1M, %.1f more event (`AllocationQueued`) × $%.2f/1M", moreInv, perEventsInv, moreEvents, p.EventBridgeEvents),
	}
	c.Extra = sumUSD(c.Lines)
	c.Total, c.Times = allocation+c.Extra, (allocation+c.Extra)/allocation
	platform := float64(PlatformLogBytes(toMs(c.Took.Mean), c.BilledMs))
	logBytes := c.LogBytes + c.Invocations*platform + moreInv*ev.LogBytes
	c.Logs = costLine("CloudWatch Logs ingestion", logsUSD(logBytes), "%.0f B (%.0f PlacementFunction, %.0f platform, %.0f EventsFunction) × $%.2f/GB",
		logBytes, c.LogBytes, c.Invocations*platform, moreInv*ev.LogBytes, p.LogsPerGB)
	c.Unbatched = max(c.Runs-c.Invocations, 0) * (invocationUSD(c.BilledMs) + amortised + 2*p.SQSRequests)
	if retryAfter > 0 {
		c.RetryPosts = int(math.Ceil(float64(c.Wait) / float64(retryAfter)))
		c.RetryExtra = float64(c.RetryPosts) * allocation
	}
}

func (q *QueuedResult) price(m CostModel) {
	if len(m.Scenarios) == 0 {
		return
	}
	sc := m.Scenarios[0]
	for i := range q.Cost.Cohorts {
		q.Cost.Cohorts[i].price(sc, m.Inputs, sc.Total, q.Latency.RetryAfter)
	}
}
