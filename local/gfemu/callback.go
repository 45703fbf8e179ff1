package gfemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// errNotJSON: the answer cannot be returned as the allocation's payload.
var errNotJSON = errors.New("callback answered 2xx with a body that is not JSON")

// newCallbackClient does not follow redirects (a 3xx is a failed callback,
// as for the real allocator's non-2xx rule) and keeps no idle connections:
// each game server is called once per registration, and pooled connections
// to servers that since exited only produce confusing errors.
func newCallbackClient(timeout time.Duration) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableKeepAlives = true
	return &http.Client{
		Timeout:   timeout,
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// callback makes the allocation callback: the payload as the body and the
// callback token as Authorization, verbatim or, when bearer, as
// "Bearer <token>". GameFabric documents only that the token travels in
// that header, so the stack can send either form. A server registered
// without a token gets no Authorization header.
func callback(ctx context.Context, client *http.Client, cb Callback, bearer bool, payload json.RawMessage) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cb.URL, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build callback request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	switch {
	case cb.Token == "":
	case bearer:
		req.Header.Set("Authorization", "Bearer "+cb.Token)
	default:
		req.Header.Set("Authorization", cb.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read callback answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("callback answered %s", resp.Status)
	}
	if len(raw) > maxBodyBytes {
		return nil, fmt.Errorf("callback answer exceeds %d bytes", maxBodyBytes)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, errNotJSON
	}
	return raw, nil
}
