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

// QueuedCost is what a queued placement costs beyond a fresh allocation,
// for each wait: one cohort per wait, each on a placementRig of its own.
type QueuedCost struct {
	Cohorts []QueuedCohort
	Spacing time.Duration // between a cohort's POSTs
	// PollersPerMonth is what the event source's empty long polls cost
	// however many placements wait: Lambda's lambdaPollers pollers, each
	// receiving every lambdaLongPoll, in USD per month.
	PollersPerMonth float64
}

// costSpacing spaces a cohort's POSTs, so that their messages come due
// apart and each run is an invocation of its own, as at a low rate.
const costSpacing = 250 * time.Millisecond

// lambdaLongPoll is the WaitTimeSeconds of Lambda's receives.
const lambdaLongPoll = 20 * time.Second

// QueuedCohort is N placements that waited Wait on average (MeanWait,
// measured) in a dry region before it was given its capacity back, and
// what they made in all, per placement.
type QueuedCohort struct {
	Wait, MeanWait, Elapsed time.Duration
	N                       int
	IDPrefix                string
	Post, Worker            Phase        // requests of the POSTs; of the worker and its event source
	Rows                    []RequestRow // both, per placement
	// Per placement: the worker's runs (messages handled), invocations and
	// messages handed back; GameFabric calls, the POST's included.
	Runs, Invocations, HandedBack, GameFabricCalls float64
	BilledMs                                       float64 // per invocation, each rounded up to 1 ms
	Took                                           Summary // per invocation, in process
	// SQS requests billed per placement (64 KB chunks): sent (the POST's
	// and the worker's), received with messages, deleted. EmptyReceives
	// are the event source's empty long polls over the whole cohort.
	SQS, Sends, Receives, Deletes float64
	EmptyReceives                 int
	// The worker's DynamoDB requests and units per placement, region-health
	// reads apart (HealthReads, with its Secrets Manager calls: amortised).
	// RoomQueries are its FreeRoomsIndex Queries, for which DynamoDB Local
	// reports no units (priced at a Query's least, as an allocation's).
	Requests, Reads, Writes, IndexWrites, HealthReads, Secrets, RoomQueries float64
	LogBytes                                                                float64 // PlacementFunction's output per placement
	// RecordBytes is the size of the first placement's record once
	// Allocated, by DynamoDB's rules: every run added its attempt.
	RecordBytes int
	Events      EventsResult
	Failures    Counts
	// Priced (price): the items beyond a fresh allocation, their sum
	// (logs apart), and a fresh allocation plus it. RetryPosts are the
	// failed POSTs of a caller retrying every Retry-After over Wait, and
	// RetryExtra what they cost, each priced as an allocation.
	Lines             []CostLine
	Logs              CostLine
	Extra, Total      float64
	RetryPosts        int
	RetryExtra, Times float64 // Times: Total ÷ a fresh allocation
	// Unbatched is what Extra would add if every run were an invocation of
	// its own with a receive and a delete of its own, as at a low rate.
	Unbatched float64
}

// MeasureQueuedCost runs one cohort of o.CostN placements per wait in
// o.Waits, side by side, each on its own rig, then reads their stream
// records through the events filters (MeasureEvents).
func MeasureQueuedCost(ctx context.Context, s *Stack, o QueuedOptions, log io.Writer) (QueuedCost, error) {
	res := QueuedCost{Spacing: costSpacing, Cohorts: make([]QueuedCohort, len(o.Waits)),
		PollersPerMonth: lambdaPollers * monthSeconds / lambdaLongPoll.Seconds() * prices.SQSRequests / 1e6}
	run := runID()
	errs := make([]error, len(o.Waits))
	var wg sync.WaitGroup
	for i, w := range o.Waits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Cohorts[i], errs[i] = runCohort(ctx, s, fmt.Sprintf("qc%d-%s-", int(w.Seconds()), run), w, o)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	for i := range res.Cohorts {
		c := &res.Cohorts[i]
		ev, err := MeasureEvents(ctx, s, LifecycleResult{IDPrefix: c.IDPrefix}, io.Discard)
		if err != nil {
			return res, fmt.Errorf("queued placements' events: %w", err)
		}
		c.Events = ev
		progress(log, "queued placement waiting %s: %.1f runs, %.2f invocations, %.2f SQS requests, %.2f write units, %.1f events invocations per placement",
			c.MeanWait.Round(10*time.Millisecond), c.Runs, c.Invocations, c.SQS, c.Writes, ev.Invocations)
	}
	return res, nil
}

// runCohort drains RegionQueued on a new rig, POSTs n queued placements
// costSpacing apart, gives the region back so that they waited w on
// average, and waits until every one is settled and the queue is empty.
func runCohort(ctx context.Context, s *Stack, prefix string, w time.Duration, o QueuedOptions) (QueuedCohort, error) {
	n, timeout := o.CostN, min(int(w.Seconds())+60, 600) // a queue timeout the wait stays well within
	ctx, cancel := context.WithTimeout(ctx, w+time.Duration(n)*costSpacing+time.Minute)
	defer cancel()
	c := QueuedCohort{Wait: w, N: n, IDPrefix: prefix, Failures: Counts{}}
	rig, err := newPlacementRig(ctx, s, "bench-"+strings.TrimSuffix(prefix, "-"))
	if err != nil {
		return c, err
	}
	defer rig.Close()
	rig.standIn.Always(RegionQueued, noCapacity(RegionQueued))
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
		waited += back.Sub(time.Now())
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

// settlePolls bounds settle: 2 minutes of polls.
const settlePolls = 600

// count reads the rig's counters into per-placement figures.
func (c *QueuedCohort) count(r *placementRig, health, rooms string) {
	n := float64(c.N)
	c.Post, c.Worker = Phase{N: c.N, Ops: r.post.Counter.Take()}, Phase{N: c.N, Ops: r.worker.Take()}
	c.Rows = append(requestRows(fmt.Sprintf("POST (%d)", c.N), c.Post), requestRows(fmt.Sprintf("worker and its event source (%d)", c.N), c.Worker)...)
	inv, records, handedBack, billedMs, took := r.invoker.counts()
	c.Invocations, c.Runs, c.HandedBack, c.Took = float64(inv)/n, float64(records)/n, float64(handedBack)/n, took
	c.BilledMs = billedMs / float64(max(inv, 1))
	servers, calls := map[string]int{}, r.standIn.Calls()
	for _, call := range calls {
		if id, _ := call.Payload["GameInstanceId"].(string); call.Answered == http.StatusOK {
			servers[id]++
		}
	}
	c.GameFabricCalls = float64(len(calls)) / n
	for id, k := range servers {
		if k != 1 {
			c.Failures[id+": "+strconv.Itoa(k)+" servers"]++
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
	c.Requests, c.Reads, c.Writes, c.IndexWrites, _ = dynamoPerCall(c.Worker.Ops, c.N, func(k OpKey) bool { return k.Table != health })
	c.HealthReads, _, _, _, _ = dynamoPerCall(c.Worker.Ops, c.N, func(k OpKey) bool { return k.Table == health })
	c.RoomQueries, _, _, _, _ = dynamoPerCall(c.Worker.Ops, c.N, func(k OpKey) bool { return k.Table == rooms && k.Operation == "Query" })
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
	p := prices
	line := func(item string, usd float64, basis string, args ...any) CostLine {
		return CostLine{Item: item, Basis: fmt.Sprintf(basis, args...), USD: usd}
	}
	amortised := sc.HealthReads*in.HealthReadRRU*p.DynamoRRU + sc.SecretsCalls*p.SecretsPer10k/1e4*1e6
	ev := c.Events
	moreInv, moreEvents := max(ev.Invocations-1, 0), max(ev.Events-1, 0)
	perEventsInv := 0.0
	if ev.Invocations > 0 {
		perEventsInv = ev.LambdaUSD / ev.Invocations
	}
	c.Lines = []CostLine{
		line("SQS requests", c.SQS*p.SQSRequests, "%.2f (%.2f sends, %.2f receives, %.2f deletes; 64 KB chunks) × $%.2f/1M",
			c.SQS, c.Sends, c.Receives, c.Deletes, p.SQSRequests),
		line("PlacementFunction requests", c.Invocations*p.LambdaRequests, "%.2f invocations (%.2f runs) × $%.2f/1M", c.Invocations, c.Runs, p.LambdaRequests),
		line("PlacementFunction duration", c.Invocations*c.BilledMs*lambdaUSDPerMs, "%.2f × %.1f ms billed × %g GB × $%.10f/GB-s",
			c.Invocations, c.BilledMs, p.LambdaMemoryMB/1024, p.LambdaGBSecond),
		line("DynamoDB reads (worker)", (c.Reads+c.RoomQueries*queryMinRRU)*p.DynamoRRU, "(%.2f RRU + %.2f free-room queries × %.1f RRU) × $%.3f/1M",
			c.Reads, c.RoomQueries, queryMinRRU, p.DynamoRRU),
		line("DynamoDB writes (worker)", c.Writes*p.DynamoWRU, "%.2f WRU × $%.3f/1M", c.Writes, p.DynamoWRU),
		line("Region-health reads and Secrets Manager, amortised", c.Invocations*amortised, "%.2f invocations × (%.3f reads × %.0f RRU + %.2g calls), as an allocation's",
			c.Invocations, sc.HealthReads, in.HealthReadRRU, sc.SecretsCalls),
		line("Events (EventsFunction, EventBridge)", moreInv*perEventsInv+moreEvents*p.EventBridgeEvents,
			"%.1f more invocations × $%.2f/1M, %.1f more event (`AllocationQueued`) × $%.2f/1M", moreInv, perEventsInv, moreEvents, p.EventBridgeEvents),
	}
	c.Extra = 0
	for _, l := range c.Lines {
		c.Extra += l.USD
	}
	c.Total, c.Times = allocation+c.Extra, (allocation+c.Extra)/allocation
	platform := float64(PlatformLogBytes(toMs(c.Took.Mean), c.BilledMs))
	logBytes := c.LogBytes + c.Invocations*platform + moreInv*ev.LogBytes
	c.Logs = line("CloudWatch Logs ingestion", logBytes*1e6/1e9*p.LogsPerGB, "%.0f B (%.0f PlacementFunction, %.0f platform, %.0f EventsFunction) × $%.2f/GB",
		logBytes, c.LogBytes, c.Invocations*platform, moreInv*ev.LogBytes, p.LogsPerGB)
	c.Unbatched = max(c.Runs-c.Invocations, 0) * (p.LambdaRequests + c.BilledMs*lambdaUSDPerMs + amortised + 2*p.SQSRequests)
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

// QueuedResult is issue 23's figures.
type QueuedResult struct {
	Latency QueuedLatency
	Cost    QueuedCost
}
