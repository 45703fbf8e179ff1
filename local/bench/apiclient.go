package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// allocResponse is the part of POST /v1/allocations' answer the bench checks.
type allocResponse struct {
	Region       string `json:"region"`
	FallbackUsed bool   `json:"fallbackUsed"`
	Server       *struct {
		Address string `json:"address"`
	} `json:"server"`
	Attempts []struct {
		Region string `json:"region"`
		Status int    `json:"status"`
	} `json:"attempts"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// apiResult is one call through the local HTTP API.
type apiResult struct {
	Status int
	Body   allocResponse
	Took   time.Duration
	Err    error
}

// Outcome is "201", "409 ALLOCATION_IN_PROGRESS" or "transport error".
func (r apiResult) Outcome() string {
	switch {
	case r.Err != nil:
		return "transport error"
	case r.Body.Error != nil:
		return strconv.Itoa(r.Status) + " " + r.Body.Error.Code
	}
	return strconv.Itoa(r.Status)
}

// newAPIClient keeps enough idle connections that many concurrent callers
// reuse theirs instead of paying a TCP handshake per call.
func newAPIClient(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}}
}

// postAllocation asks for a server for gameInstanceID in region; the body
// is what a game backend sends.
func postAllocation(ctx context.Context, c *http.Client, apiURL, gameInstanceID, region string) apiResult {
	body, _ := json.Marshal(map[string]string{"gameInstanceId": gameInstanceID, "desiredRegion": region,
		"gameServerVersion": Version, "serverArgs": "-map=arena"})
	var r apiResult
	var raw []byte
	r.Status, raw, r.Took, r.Err = postJSON(ctx, c, apiURL+"/v1/allocations", "", body)
	if r.Err == nil {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			r.Err = fmt.Errorf("HTTP %d with an undecodable body: %w", r.Status, err)
		}
	}
	return r
}

// postJSON POSTs a JSON body, with a bearer token unless it is empty, and
// returns the status, the answer (up to 1 MiB) and the round trip, the
// answer read in full.
func postJSON(ctx context.Context, c *http.Client, url, token string, body []byte) (status int, answer []byte, took time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, time.Since(start), err
}
