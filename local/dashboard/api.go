package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// TODO(lead): allocclient — this file goes once shared/allocclient is in
// the branch: apiClient's three calls are its Regions, Allocate (with
// MaxAttempts 1: the dashboard shows every answer) and Get, and apiError
// is its *Error.

// apiClient calls the local HTTP API the way a game backend would.
type apiClient struct {
	base string
	http *http.Client
}

// maxAnswer bounds what is read of an answer: records are a few KiB and
// the regions list of a local stack a few more.
const maxAnswer = 1 << 20

// apiError is a non-2xx answer.
type apiError struct {
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// allocateRequest is POST /v1/allocations' body.
type allocateRequest struct {
	GameInstanceID    string `json:"gameInstanceId"`
	DesiredRegion     string `json:"desiredRegion,omitempty"`
	GameServerVersion string `json:"gameServerVersion,omitempty"`
}

// apiAllocation is the part of an allocation answer the dashboard uses.
type apiAllocation struct {
	GameInstanceID string `json:"gameInstanceId"`
	State          string `json:"state"`
	Region         string `json:"region"`
	Server         *struct {
		Address string         `json:"address"`
		IP      string         `json:"ip"`
		Ports   map[string]int `json:"ports"`
	} `json:"server"`
}

// apiRegion is one region of GET /v1/regions.
type apiRegion struct {
	Region      string       `json:"region"`
	Zone        string       `json:"zone"`
	PingTargets []pingTarget `json:"pingTargets"`
	RefreshedAt time.Time    `json:"refreshedAt"`
	Health      string       `json:"health"`
	HealthSince time.Time    `json:"healthSince"`
}

type pingTarget struct {
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}

func (c apiClient) regions(ctx context.Context) ([]apiRegion, error) {
	var out struct {
		Regions []apiRegion `json:"regions"`
	}
	if err := c.call(ctx, http.MethodGet, "/v1/regions", nil, &out); err != nil {
		return nil, err
	}
	return out.Regions, nil
}

// allocate returns the allocation as the API answered it.
func (c apiClient) allocate(ctx context.Context, r allocateRequest) (json.RawMessage, error) {
	var out json.RawMessage
	return out, c.call(ctx, http.MethodPost, "/v1/allocations", r, &out)
}

func (c apiClient) get(ctx context.Context, id string) (*apiAllocation, error) {
	var out apiAllocation
	return &out, c.call(ctx, http.MethodGet, "/v1/allocations/"+url.PathEscape(id), nil, &out)
}

func (c apiClient) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: the local API does not answer: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return errorOf(resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: %d answer is not JSON: %w", method, path, resp.StatusCode, err)
	}
	return nil
}

// errorOf reads the service's {"error": {"code", "message"}}, or API
// Gateway's own {"message"}.
func errorOf(status int, raw []byte) *apiError {
	var body struct {
		Error   *apiError `json:"error"`
		Message string    `json:"message"`
	}
	e := &apiError{Status: status}
	if json.Unmarshal(raw, &body) == nil && body.Error != nil {
		e.Code, e.Message = body.Error.Code, body.Error.Message
	} else {
		e.Message = body.Message
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}
