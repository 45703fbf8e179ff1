package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// QueuedResult is issue 23's figures.
type QueuedResult struct {
	Latency QueuedLatency
	Cost    QueuedCost
}

// QueuedCost is what a queued placement costs beyond a fresh allocation:
// one cohort per wait, each on a placementRig of its own, their POSTs
// Spacing apart. PollersPerMonth is what the event source's empty long
// polls cost however many placements wait, USD per month.
type QueuedCost struct {
	Cohorts         []QueuedCohort
	Spacing         time.Duration
	PollersPerMonth float64
}

const (
	// costSpacing spaces a cohort's POSTs, so that their messages come due
	// apart and each run is an invocation of its own, as at a low rate.
	costSpacing = 250 * time.Millisecond
	// lambdaLongPoll is the WaitTimeSeconds of Lambda's receives.
	lambdaLongPoll = 20 * time.Second
	// settlePolls bounds settle: 2 minutes of polls.
	settlePolls = 600
)

// QueuedCohort is N placements that waited Wait on average (MeanWait,
// measured) in a dry region before it was given its capacity back, and
// what they made, per placement: the worker's runs (messages handled) and
// invocations, GameFabric calls (the POST's included), the billed time
// per invocation; SQS requests billed (64 KB chunks) sent, received with
// messages and deleted, and the empty long polls of the whole cohort; the
// worker's DynamoDB requests and units (region-health reads and Secrets
// Manager calls apart: amortised) and FreeRoomsIndex Queries (no units
// from DynamoDB Local: priced at a Query's least); PlacementFunction's
// output; the first record's size once Allocated. Priced (price): the
// items beyond a fresh allocation, their sum, a fresh allocation plus it,
// the failed POSTs of a caller retrying every Retry-After over Wait and
// what they cost, and what Extra would add were every run an invocation
// with a receive and a delete of its own, as at a low rate.
type QueuedCohort struct {
	Wait, MeanWait, Elapsed                                                 time.Duration
	N                                                                       int
	IDPrefix                                                                string
	Post, Worker                                                            Phase
	Rows                                                                    []RequestRow
	Runs, Invocations, GameFabricCalls, BilledMs                            float64
	Took                                                                    Summary
	SQS, Sends, Receives, Deletes                                           float64
	EmptyReceives                                                           int
	Requests, Reads, Writes, IndexWrites, HealthReads, Secrets, RoomQueries float64
	LogBytes                                                                float64
	RecordBytes                                                             int
	Events                                                                  EventsResult
	Failures                                                                Counts
	Lines                                                                   []CostLine
	Logs                                                                    CostLine
	Extra, Total, Times                                                     float64
	RetryPosts                                                              int
	RetryExtra, Unbatched                                                   float64
}

// MeasureQueuedCost runs one cohort of o.CostN placements per wait in
// o.Waits, side by side, then reads their stream records through the
// events filters (MeasureEvents).
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

// runCohort drains RegionQueued on a new rig, POSTs n queued placements
// costSpacing apart, gives the region back so that they waited w on
// average, and waits until every one is settled and the queue is empty.
func runCohort(ctx context.Context, s *Stack, prefix string, w time.Duration, n int) (QueuedCohort, error) {
	timeout := min(int(w.Seconds())+60, 600) // a queue timeout the wait stays well within
	ctx, cancel := context.WithTimeout(ctx, w+time.Duration(n)*costSpacing+time.Minute)
	defer cancel()
	c := QueuedCohort{Wait: w, N: n, IDPrefix: prefix, Failures: Counts{}}
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
		resp, _, err := rig.post.Post(ctx, queuedRequest(prefix+strconv.Itoa(i), timeout))
		if err != nil {
			return c, fmt.Errorf("queued cost: POST: %w", err)
		}
		if resp.StatusCode != http.StatusAccepted {
			c.Failures["POST answered "+strconv.Itoa(resp.StatusCode)]++
		}
		waited += time.Until(back)
	}
	if err := wait.Sleep(ctx, time.Until(back)); err != nil {
		return c, err
	}
	rig.standIn.Always(RegionQueued, gfemu.Answer{Delay: rig.standIn.Delay})
	if err := rig.settle(ctx, s, prefix, n, &c); err != nil {
		return c, err
	}
	c.Elapsed, c.MeanWait = time.Since(began), waited/time.Duration(n)
	// Counted before the rig stops: the pollers' receives in flight then
	// are empty and end cut short. The pause lets the last delete's
	// answer, which moto has acted on, reach the counter.
	_ = wait.Sleep(ctx, 100*time.Millisecond)
	c.count(rig, s.Tables["RegionHealthTable"], s.Tables["GameServersTable"])
	c.RecordBytes, err = recordSize(ctx, s, prefix+"0")
	return c, err
}

// settle polls the cohort's records (uncounted) until none is Queued or
// Allocating and the rig's queue is empty: every message deleted. At most
// settlePolls polls, 200 ms apart, and until ctx ends.
func (r *placementRig) settle(ctx context.Context, s *Stack, prefix string, n int, c *QueuedCohort) error {
	records := store.NewGameInstances(s.DDB, s.Tables["GameInstancesTable"])
	pending := map[string]bool{}
	for i := range n {
		pending[prefix+strconv.Itoa(i)] = true
	}
	for range settlePolls {
		for id := range pending {
			rec, err := records.Get(ctx, id)
			if err != nil && !errors.Is(err, gameinstance.ErrNotFound) {
				return fmt.Errorf("queued cost: read %s: %w", id, err)
			}
			if err == nil && rec.State != gameinstance.StateQueued && rec.State != gameinstance.StateAllocating {
				if rec.State != gameinstance.StateAllocated {
					c.Failures[string(rec.State)]++
				}
				delete(pending, id)
			}
		}
		if len(pending) == 0 {
			if empty, err := r.drained(ctx); err != nil || empty {
				return err
			}
		}
		if err := wait.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("queued cost: %d placements still pending: %w", len(pending), err)
		}
	}
	return fmt.Errorf("queued cost: %d placements still pending after %d polls", len(pending), settlePolls)
}

// count reads the rig's counters into per-placement figures.
func (c *QueuedCohort) count(r *placementRig, health, rooms string) {
	n := float64(c.N)
	c.Post, c.Worker = Phase{N: c.N, Ops: r.post.Counter.Take()}, Phase{N: c.N, Ops: r.worker.Take()}
	c.Rows = append(requestRows(fmt.Sprintf("POST (%d)", c.N), c.Post), requestRows(fmt.Sprintf("worker and its event source (%d)", c.N), c.Worker)...)
	inv := r.invoker
	inv.mu.Lock()
	c.Invocations, c.Runs, c.Took = float64(inv.invocations)/n, float64(inv.records)/n, Summarize(inv.took)
	c.BilledMs = inv.billedMs / float64(max(inv.invocations, 1))
	inv.mu.Unlock()
	calls := r.standIn.Calls()
	c.GameFabricCalls = float64(len(calls)) / n
	for id, servers := range r.standIn.UpstreamAllocations() {
		if len(servers) != 1 {
			c.Failures[id+": "+strconv.Itoa(len(servers))+" servers"]++
		}
	}
	for _, p := range []Phase{c.Post, c.Worker} {
		for k, op := range p.Ops {
			switch {
			case !strings.HasPrefix(k.Service, "SQS"):
			case k.Operation == "SendMessage":
				c.Sends += float64(op.Chunks) / n
			case k.Operation == "ReceiveMessage":
				c.Receives, c.EmptyReceives = c.Receives+float64(op.Chunks-op.Empty)/n, c.EmptyReceives+op.Empty
			default:
				c.Deletes += float64(op.Chunks) / n
			}
		}
	}
	c.SQS = c.Sends + c.Receives + c.Deletes
	u := dynamoPerCall(c.Worker.Ops, c.N, func(k OpKey) bool { return k.Table != health })
	c.Requests, c.Reads, c.Writes, c.IndexWrites = u.Requests, u.Reads, u.Writes, u.IndexWrites
	c.HealthReads = dynamoPerCall(c.Worker.Ops, c.N, func(k OpKey) bool { return k.Table == health }).Requests
	c.RoomQueries = dynamoPerCall(c.Worker.Ops, c.N, func(k OpKey) bool { return k.Table == rooms && k.Operation == "Query" }).Requests
	for k, op := range c.Worker.Ops {
		if k.Service == "SecretsManager" {
			c.Secrets += float64(op.Calls) / n
		}
	}
	bytes, _ := r.logs.counts()
	c.LogBytes = float64(bytes) / n
}

// price fills in the cohort's bill per 1M placements beyond a fresh
// allocation: the worker's invocations, its SQS and DynamoDB requests, the
// region-health reads and Secrets Manager calls amortised as sc amortises
// an allocation's (per invocation), and the events beyond an allocation's
// one (its outcome: one EventsFunction invocation, one event). allocation
// is sc's price of a fresh allocation; retryAfter the 503's Retry-After a
// caller would wait instead.
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

// price fills in every cohort's bill from the cost model's first scenario
// and the latency run's Retry-After.
func (q *QueuedResult) price(m CostModel) {
	if len(m.Scenarios) == 0 {
		return
	}
	sc := m.Scenarios[0]
	for i := range q.Cost.Cohorts {
		q.Cost.Cohorts[i].price(sc, m.Inputs, sc.Total, q.Latency.RetryAfter)
	}
}
