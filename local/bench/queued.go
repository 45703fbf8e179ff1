package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// QueuedOptions is issue 23's phase: N placements made while the region
// is dry, arriving evenly over Spread from its start; capacity returns Dry
// after it. Beside it, one cohort of CostN placements per wait in Waits
// (MeasureQueuedCost). N 0 skips the phase.
type QueuedOptions struct {
	N            int
	Dry, Spread  time.Duration
	QueueTimeout int // queueTimeoutSeconds of every queued placement
	CostN        int
	Waits        []time.Duration
}

// RegionQueued is the region the queued placements ask for: FALLBACK_REGION
// itself, so that a plan is that one region and every run of a placement
// makes one GameFabric call.
const RegionQueued = RegionFallback

// noCapacity is GameFabric's answer when no game server is ready (as
// local/gfemu answers it): 404, no Retry-After.
var noCapacity = gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available in region " + RegionQueued + " (bench: drained)"}

// QueuedLatency is the time from capacity returning to a placement being
// Allocated, for placements queued by the service (queueTimeoutSeconds,
// PlacementFunction on its SQS event source, through the local stack)
// and, side by side, the same placements made by a caller retrying POST
// every Retry-After until 201 (today's behaviour). Queue and Retry run to
// the record's updatedAt at Allocated, stamped right after GameFabric's
// answer, so no poll interval blurs them; QueueSeen and RetrySeen to when
// the caller held the server. Queued counts the placements answered 202.
// Per placement: GameFabric calls (the POST's included), the retry loop's
// POSTs and AllocateAndWait's GETs.
type QueuedLatency struct {
	N, QueueTimeout      int
	Dry, Spread          time.Duration
	Queue, Retry         Summary
	QueueSeen, RetrySeen Summary
	Queued               int
	QueueCalls           float64
	Posts, Gets          float64
	RetryAfter           time.Duration // of the 503 NO_CAPACITY the loop waited
	Failures             Counts
}

// placementOutcome is one caller's end.
type placementOutcome struct {
	id         string
	alloc      *allocclient.Allocation
	seen       time.Time // when the caller held the server
	posts      int
	retryAfter time.Duration
	err        error
}

// MeasureQueuedLatency drains RegionQueued, starts o.N queued placements
// (AllocateAndWait) and o.N retry loops in pairs, evenly over o.Spread,
// gives the region its capacity back o.Dry after it began, and waits for
// every caller. The region is given back on every return.
func MeasureQueuedLatency(ctx context.Context, s *Stack, o QueuedOptions, log io.Writer) (QueuedLatency, error) {
	res := QueuedLatency{N: o.N, QueueTimeout: o.QueueTimeout, Dry: o.Dry, Spread: o.Spread, Failures: Counts{}}
	ctx, cancel := context.WithTimeout(ctx, o.Dry+time.Duration(o.QueueTimeout)*time.Second+30*time.Second)
	defer cancel()
	capacity := gfemu.Answer{Delay: s.StandIn.Delay}
	s.StandIn.Always(RegionQueued, noCapacity)
	defer s.StandIn.Always(RegionQueued, capacity)
	run := runID()
	gets := &getCounter{base: http.DefaultTransport}
	queueClient, err := allocclient.New(allocclient.Options{BaseURL: s.APIURL, MaxAttempts: 1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: gets}})
	if err != nil {
		return res, err
	}
	retryClient := newAPIClient(s.APIURL, o.N)
	outcomes := make([]placementOutcome, 2*o.N)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range o.N {
		at := began.Add(time.Duration(i) * o.Spread / time.Duration(o.N))
		wg.Go(func() {
			outcomes[i] = queuedPlacement(ctx, queueClient, fmt.Sprintf("qw-%s-%d", run, i), at, o.QueueTimeout)
		})
		wg.Go(func() {
			outcomes[o.N+i] = retryLoop(ctx, retryClient, fmt.Sprintf("qr-%s-%d", run, i), at, o.Dry+time.Duration(o.QueueTimeout)*time.Second)
		})
	}
	_ = wait.Sleep(ctx, time.Until(began.Add(o.Dry)))
	s.StandIn.Always(RegionQueued, capacity)
	back := time.Now()
	wg.Wait()
	res.Gets = float64(gets.n.Load()) / float64(o.N)
	res.summarise(outcomes[:o.N], outcomes[o.N:], back, s.StandIn.Calls())
	if res.Queue.N == 0 || res.Retry.N == 0 {
		return res, fmt.Errorf("queued placements: none allocated after capacity returned (%s); see %s", res.Failures, s.LogPath())
	}
	progress(log, "queued placement: capacity back → Allocated p50 %s p99 %s (n=%d); caller retrying every %s: p50 %s p99 %s (n=%d); %s",
		fmtSec(res.Queue.P50), fmtSec(res.Queue.P99), res.Queue.N, res.RetryAfter, fmtSec(res.Retry.P50), fmtSec(res.Retry.P99), res.Retry.N, res.Failures)
	return res, nil
}

// queuedRequest is what a game backend sends for id, in RegionQueued.
func queuedRequest(id string, queueTimeout int) allocclient.AllocateRequest {
	req := allocateRequest(id, RegionQueued)
	req.QueueTimeoutSeconds = &queueTimeout
	return req
}

// queuedPlacement submits id at at with a queue timeout and waits for it
// with AllocateAndWait.
func queuedPlacement(ctx context.Context, c *allocclient.Client, id string, at time.Time, timeout int) placementOutcome {
	out := placementOutcome{id: id, posts: 1}
	if out.err = wait.Sleep(ctx, time.Until(at)); out.err == nil {
		out.alloc, out.err = c.AllocateAndWait(ctx, queuedRequest(id, timeout))
		out.seen = time.Now()
	}
	return out
}

// retryLoop is today's caller: POST without queueing and, after each 503
// NO_CAPACITY, again after its Retry-After, until a 201, another answer,
// or within ends.
func retryLoop(ctx context.Context, c *allocclient.Client, id string, at time.Time, within time.Duration) placementOutcome {
	out := placementOutcome{id: id}
	if out.err = wait.Sleep(ctx, time.Until(at)); out.err != nil {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for out.posts < int(within/time.Second) {
		out.posts++
		a, err := c.Allocate(ctx, queuedRequest(id, 0))
		var e *allocclient.Error
		switch {
		case err == nil:
			out.alloc, out.seen = a, time.Now()
			return out
		case !errors.As(err, &e) || e.Code != allocclient.CodeNoCapacity:
			out.err = err
			return out
		}
		out.retryAfter = e.RetryAfter
		if out.err = wait.Sleep(ctx, max(e.RetryAfter, time.Second)); out.err != nil {
			return out
		}
	}
	out.err = fmt.Errorf("no 201 after %d POSTs", out.posts)
	return out
}

// summarise checks every outcome against the stand-in's calls and times
// the placements from back, when capacity returned.
func (r *QueuedLatency) summarise(queued, retried []placementOutcome, back time.Time, calls []gfemu.Call) {
	perID := map[string][2]int{} // GameFabric calls, servers handed out
	for _, c := range calls {
		id, _ := c.Payload["GameInstanceId"].(string)
		n := perID[id]
		n[0]++
		if c.Answered == http.StatusOK {
			n[1]++
		}
		perID[id] = n
	}
	series := func(outs []placementOutcome, label string) (rec, seen []time.Duration, calls float64) {
		for _, o := range outs {
			calls += float64(perID[o.id][0]) / float64(len(outs))
			if why := check(o, back, perID[o.id][1]); why != "" {
				r.Failures[label+": "+why]++
			} else {
				rec, seen = append(rec, o.alloc.UpdatedAt.Sub(back)), append(seen, o.seen.Sub(back))
			}
		}
		return rec, seen, calls
	}
	q, qs, queueCalls := series(queued, "queued")
	p, ps, _ := series(retried, "retry loop")
	r.Queue, r.QueueSeen, r.Retry, r.RetrySeen, r.QueueCalls = Summarize(q), Summarize(qs), Summarize(p), Summarize(ps), queueCalls
	for _, o := range queued {
		if o.alloc != nil && !o.alloc.QueuedUntil.IsZero() {
			r.Queued++
		}
	}
	for _, o := range retried {
		r.Posts += float64(o.posts) / float64(len(retried))
		r.RetryAfter = max(r.RetryAfter, o.retryAfter)
	}
}

// check says why a placement does not count, "" when it does.
func check(o placementOutcome, back time.Time, servers int) string {
	var e *allocclient.Error
	switch {
	case errors.As(o.err, &e) && e.Code != "":
		return e.Code
	case o.err != nil:
		return "error"
	case o.alloc == nil || o.alloc.State != allocclient.StateAllocated:
		return "not Allocated"
	case servers != 1:
		return strconv.Itoa(servers) + " servers from GameFabric"
	case o.alloc.UpdatedAt.Before(back):
		return "Allocated before capacity returned"
	}
	return ""
}

// getCounter counts the GETs a client sends.
type getCounter struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (g *getCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/allocations/") {
		g.n.Add(1)
	}
	return g.base.RoundTrip(req)
}
