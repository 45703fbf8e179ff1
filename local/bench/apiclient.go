package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// apiResult is one call through the local HTTP API.
type apiResult struct {
	Status int
	Code   string                  // the error answer's code, "" for a success or a bare gateway answer
	Body   *allocclient.Allocation // the allocation answered; nil for an error
	Took   time.Duration
	Err    error // no answer: transport error, or an answer that was not one
}

// Outcome is "201", "409 ALLOCATION_IN_PROGRESS" or "transport error".
func (r apiResult) Outcome() string {
	switch {
	case r.Err != nil:
		return "transport error"
	case r.Code != "":
		return strconv.Itoa(r.Status) + " " + r.Code
	}
	return strconv.Itoa(r.Status)
}

// server is the allocated server's address, "" when there is none.
func (r apiResult) server() string {
	if r.Body == nil || r.Body.Server == nil {
		return ""
	}
	return r.Body.Server.Address
}

// newAPIClient calls the stack's API once per call (the bench measures
// single calls) and keeps enough idle connections that concurrent callers
// reuse theirs instead of paying a TCP handshake per call.
func newAPIClient(apiURL string, conns int) *allocclient.Client {
	c, err := allocclient.New(allocclient.Options{BaseURL: apiURL, MaxAttempts: 1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}}})
	if err != nil {
		panic(err) // the stack's own URL: a bug, not an input
	}
	return c
}

// postAllocation asks for a server for gameInstanceID in region.
func postAllocation(ctx context.Context, c *allocclient.Client, gameInstanceID, region string) apiResult {
	return postRequest(ctx, c, allocateRequest(gameInstanceID, region))
}

func postRequest(ctx context.Context, c *allocclient.Client, req allocclient.AllocateRequest) apiResult {
	start := time.Now()
	a, err := c.Allocate(ctx, req)
	r := apiResult{Body: a, Took: time.Since(start), Status: http.StatusOK}
	var e *allocclient.Error
	switch {
	case err == nil && a.Created:
		r.Status = http.StatusCreated
	case errors.As(err, &e):
		r.Status, r.Code, r.Body = e.Status, e.Code, e.Allocation
	case err != nil:
		r.Err, r.Status = err, 0
	}
	return r
}

// postJSON POSTs a JSON body, with a bearer token unless it is empty, and
// returns the status, the answer (up to 1 MiB) and the round trip.
func postJSON(ctx context.Context, url, token string, body []byte) (status int, answer []byte, took time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, time.Since(start), err
}
