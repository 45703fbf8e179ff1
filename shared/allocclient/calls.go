package allocclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Read limits. An allocation answer is a few KiB; the regions list stays
// below Lambda's 6 MB response limit, so nothing larger comes from us.
const (
	maxAllocationAnswer = 1 << 20
	maxRegionsAnswer    = 6 << 20
)

// Allocate asks for a game server. It retries ALLOCATION_IN_PROGRESS,
// NO_CAPACITY, RATE_LIMITED, UPSTREAM_TIMEOUT, SERVICE_UNAVAILABLE, the
// gateway's 429 and 5xx and transport errors with the same body: the
// gameInstanceId makes that safe, a retry returns the first call's server
// and never allocates a second.
//
// With a queue timeout (r.QueueTimeoutSeconds or the deployment's) a
// placement that found no capacity is not an error: the answer is 202
// Accepted, an Allocation in StateQueued with QueuedUntil and RetryAfter.
// Get it again after RetryAfter, or let AllocateAndWait do so.
func (c *Client) Allocate(ctx context.Context, r AllocateRequest) (*Allocation, error) {
	a, _, err := c.allocate(ctx, r)
	return a, err
}

// allocate is Allocate, and whether the answer named a Retry-After at all
// (RetryAfter 0 is "look again at once" only then).
func (c *Client) allocate(ctx context.Context, r AllocateRequest) (*Allocation, bool, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, false, fmt.Errorf("allocclient: encode the allocation request: %w", err)
	}
	ans, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/allocations", route: "/v1/allocations",
		body: body, gameInstanceID: r.GameInstanceID, limit: maxAllocationAnswer})
	if err != nil {
		return nil, false, err
	}
	a, retryAfterGiven, err := decodeAllocation(ans, "POST /v1/allocations")
	if err != nil {
		return nil, false, err
	}
	a.Created = ans.status == http.StatusCreated
	return a, retryAfterGiven, nil
}

// Get returns the game instance's record (NOT_FOUND when there is none).
func (c *Client) Get(ctx context.Context, gameInstanceID string) (*Allocation, error) {
	a, _, err := c.instance(ctx, http.MethodGet, gameInstanceID)
	return a, err
}

// End ends the game instance on the backend's behalf (DELETE): Allocated,
// Linked or Unhealthy become Ended; ending an Ended one changes nothing,
// so End is retried like Allocate.
func (c *Client) End(ctx context.Context, gameInstanceID string) (*Allocation, error) {
	a, _, err := c.instance(ctx, http.MethodDelete, gameInstanceID)
	return a, err
}

// instance is Get or End, and whether the answer named a Retry-After.
func (c *Client) instance(ctx context.Context, method, gameInstanceID string) (*Allocation, bool, error) {
	if gameInstanceID == "" {
		return nil, false, ErrNoGameInstanceID
	}
	k := call{method: method, path: "/v1/allocations/" + url.PathEscape(gameInstanceID), route: "/v1/allocations/{gameInstanceId}",
		gameInstanceID: gameInstanceID, limit: maxAllocationAnswer}
	ans, err := c.do(ctx, k)
	if err != nil {
		return nil, false, err
	}
	return decodeAllocation(ans, method+" "+k.route)
}

// decodeAllocation reads an allocation answer; retryAfterGiven tells
// "Retry-After: 0" (look again at once) from no header at all, which
// AllocateAndWait paces differently.
func decodeAllocation(ans answer, op string) (a *Allocation, retryAfterGiven bool, err error) {
	a = new(Allocation)
	if err := json.Unmarshal(ans.body, a); err != nil {
		return nil, false, fmt.Errorf("allocclient: %s: %d answer is not an allocation: %w", op, ans.status, err)
	}
	if v := ans.header.Get("Retry-After"); v != "" {
		a.RetryAfter, retryAfterGiven = gameinstance.ParseRetryAfter(v, time.Now()), true
	}
	return a, retryAfterGiven, nil
}

// Regions lists the regions and their ping targets. The last answer is
// kept and revalidated (If-None-Match): an unchanged list costs no body.
func (c *Client) Regions(ctx context.Context) (*Regions, error) {
	c.regionsMu.Lock()
	etag, cached := c.regionsETag, c.regions
	c.regionsMu.Unlock()
	k := call{method: http.MethodGet, path: "/v1/regions", route: "/v1/regions", limit: maxRegionsAnswer}
	if cached != nil && etag != "" {
		k.header = http.Header{"If-None-Match": {etag}}
	}
	ans, err := c.do(ctx, k)
	if err != nil {
		return nil, err
	}
	if ans.status == http.StatusNotModified {
		if cached == nil {
			return nil, fmt.Errorf("allocclient: GET /v1/regions: 304 Not Modified to an unconditional request")
		}
		return cloneRegions(cached), nil
	}
	var r Regions
	if err := json.Unmarshal(ans.body, &r); err != nil {
		return nil, fmt.Errorf("allocclient: GET /v1/regions: %d answer is not a regions list: %w", ans.status, err)
	}
	if etag := ans.header.Get("ETag"); etag != "" {
		c.regionsMu.Lock()
		c.regionsETag, c.regions = etag, cloneRegions(&r)
		c.regionsMu.Unlock()
	}
	return &r, nil
}
