package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// TODO(lead): allocclient — this file goes once shared/allocclient is in
// the branch: its Client.Get answers the same fields, and its *Error with
// Code NOT_FOUND is the unknown id.

// allocation is the part of GET /v1/allocations/{id}'s answer play reads.
type allocation struct {
	GameInstanceID string `json:"gameInstanceId"`
	State          string `json:"state"`
	Region         string `json:"region"`
	Server         *struct {
		Address string         `json:"address"`
		IP      string         `json:"ip"`
		Ports   map[string]int `json:"ports"`
	} `json:"server"`
	EndReason string `json:"endReason"`
}

type apiClient struct{ base string }

// maxAnswer bounds what is read of an answer: a record is a few KiB.
const maxAnswer = 1 << 20

var httpClient = &http.Client{Timeout: 35 * time.Second}

func (c apiClient) get(ctx context.Context, id string) (*allocation, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/allocations/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the local API at %s does not answer (is make dev still running?): %w", c.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("GET /v1/allocations/%s: %w", id, err)
	}
	var a allocation
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("no game instance %q in the running stack: allocate one first (the dashboard, or POST %s/v1/allocations)", id, c.base)
	case resp.StatusCode != http.StatusOK:
		_ = json.Unmarshal(body, &e)
		return nil, fmt.Errorf("GET /v1/allocations/%s: %d %s %s", id, resp.StatusCode, e.Error.Code, e.Error.Message)
	case json.Unmarshal(body, &a) != nil:
		return nil, fmt.Errorf("GET /v1/allocations/%s: the answer is not an allocation", id)
	}
	return &a, nil
}
