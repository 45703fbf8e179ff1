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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/v1/allocations", bytes.NewReader(body))
	if err != nil {
		return apiResult{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return apiResult{Err: err, Took: time.Since(start)}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	r := apiResult{Status: resp.StatusCode, Took: time.Since(start), Err: err}
	if err == nil {
		if jerr := json.Unmarshal(raw, &r.Body); jerr != nil {
			r.Err = fmt.Errorf("HTTP %d with an undecodable body: %w", resp.StatusCode, jerr)
		}
	}
	return r
}
