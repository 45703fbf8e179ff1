package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// QueuedOptions is issue 23's phase: N placements arriving over Spread
// while the region is dry for Dry, and cohorts of CostN per wait in Waits.
// N 0 skips it.
type QueuedOptions struct {
	N            int
	Dry, Spread  time.Duration
	QueueTimeout int // queueTimeoutSeconds of every queued placement
	CostN        int
	Waits        []time.Duration
}

// RegionQueued is FALLBACK_REGION itself: a plan is that one region, a run
// of a placement one GameFabric call.
const RegionQueued = RegionFallback

// noCapacity is GameFabric's answer when no server is ready (as local/gfemu
// gives it): 404, no Retry-After.
var noCapacity = gfemu.Answer{Status: http.StatusNotFound, Error: "no game server available in region " + RegionQueued + " (bench: drained)"}

// QueuedLatency times placements queued by the service and, side by side,
// by a caller retrying every Retry-After, from capacity returning to the
// record's updatedAt at Allocated (stamped right after GameFabric's
// answer: no poll interval blurs it) and to the caller holding the server.
type QueuedLatency struct {
	N, QueueTimeout      int
	Dry, Spread          time.Duration
	Queue, Retry         Summary
	QueueSeen, RetrySeen Summary
	Queued               int // answered 202
	QueueCalls           float64
	Posts, Gets          float64
	RetryAfter           time.Duration // of the 503 NO_CAPACITY the caller waited
	Failures             Counts
}

type placementOutcome struct {
	id    string
	alloc *allocclient.Allocation
	seen  time.Time
	err   error
}

// MeasureQueuedLatency starts o.N queued placements and o.N retrying
// callers in pairs over o.Spread into a dry RegionQueued, which gets its
// capacity back o.Dry after the start (and on every return).
func MeasureQueuedLatency(ctx context.Context, s *Stack, o QueuedOptions, log io.Writer) (QueuedLatency, error) {
	res := QueuedLatency{N: o.N, QueueTimeout: o.QueueTimeout, Dry: o.Dry, Spread: o.Spread, Failures: Counts{}}
	within := o.Dry + time.Duration(o.QueueTimeout)*time.Second
	ctx, cancel := context.WithTimeout(ctx, within+30*time.Second)
	defer cancel()
	capacity := gfemu.Answer{Delay: s.StandIn.Delay}
	s.StandIn.Always(RegionQueued, noCapacity)
	defer s.StandIn.Always(RegionQueued, capacity)
	// Each caller keeps its connection between tries, as a real backend's would.
	pool := &http.Transport{MaxIdleConnsPerHost: 2 * o.N}
	queueCalls, retryCalls := &callCounter{base: pool}, &callCounter{base: pool}
	queueClient, err := allocclient.New(allocclient.Options{BaseURL: s.APIURL, MaxAttempts: 1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: queueCalls}})
	if err != nil {
		return res, err
	}
	retryClient, err := allocclient.New(allocclient.Options{BaseURL: s.APIURL, MaxAttempts: 1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: retryCalls}})
	if err != nil {
		return res, err
	}
	run := runID()
	outcomes := make([]placementOutcome, 2*o.N)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range 2 * o.N {
		at := began.Add(time.Duration(i%o.N) * o.Spread / time.Duration(o.N))
		wg.Go(func() {
			out := &outcomes[i]
			if out.err = wait.Sleep(ctx, time.Until(at)); out.err != nil {
				return
			}
			if i < o.N {
				out.id = fmt.Sprintf("qw-%s-%d", run, i)
				out.alloc, out.err = queueClient.AllocateAndWait(ctx, queuedRequest(out.id, o.QueueTimeout))
			} else {
				out.id = fmt.Sprintf("qr-%s-%d", run, i-o.N)
				ctx, cancel := context.WithTimeout(ctx, within)
				defer cancel()
				out.alloc, out.err = retryLoop(ctx, retryClient, queuedRequest(out.id, 0), within)
			}
			out.seen = time.Now()
		})
	}
	_ = wait.Sleep(ctx, time.Until(began.Add(o.Dry)))
	s.StandIn.Always(RegionQueued, capacity)
	back := time.Now()
	wg.Wait()
	res.Gets, res.Posts, res.RetryAfter = float64(queueCalls.gets)/float64(o.N), float64(retryCalls.posts)/float64(o.N), retryCalls.retryAfter
	res.summarise(outcomes[:o.N], outcomes[o.N:], back, s.StandIn.Calls())
	if res.Queue.N == 0 || res.Retry.N == 0 {
		return res, fmt.Errorf("queued placements: none allocated after capacity returned (%s); see %s", res.Failures, s.LogPath())
	}
	progress(log, "queued placement: capacity back → Allocated p50 %s p99 %s (n=%d); caller retrying every %s: p50 %s p99 %s (n=%d); %s",
		fmtSec(res.Queue.P50), fmtSec(res.Queue.P99), res.Queue.N, res.RetryAfter, fmtSec(res.Retry.P50), fmtSec(res.Retry.P99), res.Retry.N, res.Failures)
	return res, nil
}

// retryLoop is today's caller: it POSTs again after each 503 NO_CAPACITY's
// Retry-After (at least a second), once a second at most for within; any
// other answer ends it.
func retryLoop(ctx context.Context, c *allocclient.Client, req allocclient.AllocateRequest, within time.Duration) (*allocclient.Allocation, error) {
	for range int(within / time.Second) {
		a, err := c.Allocate(ctx, req)
		var e *allocclient.Error
		if err == nil || !errors.As(err, &e) || e.Code != allocclient.CodeNoCapacity {
			return a, err
		}
		if err := wait.Sleep(ctx, max(e.RetryAfter, time.Second)); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no 201 within %s", within)
}

func queuedRequest(id string, queueTimeout int) allocclient.AllocateRequest {
	req := allocateRequest(id, RegionQueued)
	req.QueueTimeoutSeconds = &queueTimeout
	return req
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
	series := func(outs []placementOutcome, label string) (rec, seen []time.Duration) {
		for _, o := range outs {
			if why := check(o, back, perID[o.id][1]); why != "" {
				r.Failures[label+": "+why]++
			} else {
				rec, seen = append(rec, o.alloc.UpdatedAt.Sub(back)), append(seen, o.seen.Sub(back))
			}
		}
		return rec, seen
	}
	q, qs := series(queued, "queued")
	p, ps := series(retried, "retry loop")
	r.Queue, r.QueueSeen, r.Retry, r.RetrySeen = Summarize(q), Summarize(qs), Summarize(p), Summarize(ps)
	for _, o := range queued {
		r.QueueCalls += float64(perID[o.id][0]) / float64(len(queued))
		if o.alloc != nil && !o.alloc.QueuedUntil.IsZero() {
			r.Queued++
		}
	}
}

// check says why a placement does not count, "" when it does.
func check(o placementOutcome, back time.Time, servers int) string {
	var e *allocclient.Error
	switch {
	case errors.As(o.err, &e) && e.Code != "":
		return string(e.Code)
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

// callCounter counts a client's GETs and POSTs and keeps the longest
// Retry-After of a 503.
type callCounter struct {
	base        http.RoundTripper
	mu          sync.Mutex
	gets, posts int
	retryAfter  time.Duration
}

func (c *callCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.Method == http.MethodGet {
		c.gets++
	} else {
		c.posts++
	}
	if err == nil && resp.StatusCode == http.StatusServiceUnavailable {
		c.retryAfter = max(c.retryAfter, gameinstance.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()))
	}
	return resp, err
}
