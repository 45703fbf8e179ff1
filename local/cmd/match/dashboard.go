package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/dashboard"
)

// dashAPI is make dev's dashboard API, which plays the match and shows
// the stack's state.
type dashAPI struct{ url string }

var client = &http.Client{Timeout: 15 * time.Second}

// maxAnswer bounds what is read of an answer (the state lists at most 100
// instances and 100 events).
const maxAnswer = 4 << 20

// play asks the dashboard to play a match; it returns the match's id and
// the dashboard's message.
func (d dashAPI) play(ctx context.Context, m dashboard.MatchForm) (id, msg string, err error) {
	var ans dashboard.Answer
	status, err := d.call(ctx, "api/match", m, &ans)
	switch {
	case err != nil:
		return "", "", err
	case !ans.OK || ans.GameInstanceID == "":
		return "", "", fmt.Errorf("the dashboard answered %d: %s", status, ans.Message)
	}
	return ans.GameInstanceID, ans.Message, nil
}

func (d dashAPI) state(ctx context.Context) (dashboard.State, error) {
	var st dashboard.State
	status, err := d.call(ctx, "api/state", nil, &st)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("the dashboard's state answered %d", status)
	}
	return st, err
}

// call GETs path, or POSTs body as JSON, and reads the JSON answer into into.
func (d dashAPI) call(ctx context.Context, path string, body, into any) (int, error) {
	method, payload := http.MethodGet, []byte(nil)
	if body != nil {
		method = http.MethodPost
		payload, _ = json.Marshal(body) // a form always encodes
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(d.url, "/")+"/"+path, bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("the dashboard does not answer (is make dev still running?): %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		return resp.StatusCode, errors.New("the dashboard's answer is unreadable: " + err.Error())
	}
	return resp.StatusCode, nil
}
