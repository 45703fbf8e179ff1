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

// newCallbackClient does not follow redirects (a 3xx is a failed callback,
// as for the real allocator's non-2xx rule) and keeps no idle connections:
// each game server is called once per registration, and pooled connections
// to servers that since exited only produce confusing errors.
func newCallbackClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
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

// notify makes s's allocation callback: the payload as the body and the
// callback token as Authorization, verbatim or, with cbBearer, as "Bearer
// <token>" (GameFabric documents only that the token travels in that
// header). It returns the JSON the server answered, nil when it answered
// nothing or was registered without a callback. The call is detached from
// the caller's cancellation: once a server has been taken, its callback is
// completed so the server's state and ours agree.
func (e *Emulator) notify(ctx context.Context, s Server, payload json.RawMessage) (json.RawMessage, error) {
	if s.Callback == nil {
		return nil, nil
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, s.Callback.URL, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build callback request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	switch {
	case s.Callback.Token == "":
	case e.cbBearer:
		req.Header.Set("Authorization", "Bearer "+s.Callback.Token)
	default:
		req.Header.Set("Authorization", s.Callback.Token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read callback answer: %w", err)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("callback answered %s", resp.Status)
	case len(raw) > maxBodyBytes:
		return nil, fmt.Errorf("callback answer exceeds %d bytes", maxBodyBytes)
	}
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && !json.Valid(raw) {
		return nil, errors.New("callback answered 2xx with a body that is not JSON")
	}
	return raw, nil
}
