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
)

// request is the dashboard's POST /api/match body.
type request struct {
	Players         int     `json:"players"`
	Near            string  `json:"near,omitempty"`
	CustomEventData *string `json:"customEventData,omitempty"`
}

// dashboard is make dev's dashboard API, which plays the match and shows
// the stack's state.
type dashboard struct{ url string }

var client = &http.Client{Timeout: 15 * time.Second}

// maxAnswer bounds what is read of an answer (the state lists at most 100
// instances and 100 events).
const maxAnswer = 4 << 20

// play asks the dashboard to play a match; it returns the match's id and
// the dashboard's message.
func (d dashboard) play(ctx context.Context, m request) (id, msg string, err error) {
	body, _ := json.Marshal(m)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.endpoint("api/match"), bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	var ans struct {
		OK             bool   `json:"ok"`
		GameInstanceID string `json:"gameInstanceId"`
		Message        string `json:"message"`
	}
	status, err := d.do(req, &ans)
	switch {
	case err != nil:
		return "", "", err
	case !ans.OK || ans.GameInstanceID == "":
		return "", "", fmt.Errorf("the dashboard answered %d: %s", status, ans.Message)
	}
	return ans.GameInstanceID, ans.Message, nil
}

// state is what make match reads of the dashboard's GET /api/state.
type state struct {
	Instances []struct {
		GameInstanceID string `json:"gameInstanceId"`
		State          string `json:"state"`
		Region         string `json:"region"`
		Server         *struct {
			Address string `json:"address"`
		} `json:"server"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"instances"`
	Events []event `json:"events"` // newest first
}

type event struct {
	Seq            uint64 `json:"seq"`
	DetailType     string `json:"detailType"`
	GameInstanceID string `json:"gameInstanceId"`
	Address        string `json:"address"`
	Line           string `json:"line"`
}

func (d dashboard) state(ctx context.Context) (state, error) {
	var st state
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.endpoint("api/state"), nil)
	if err != nil {
		return st, err
	}
	status, err := d.do(req, &st)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("the dashboard's state answered %d", status)
	}
	return st, err
}

func (d dashboard) do(req *http.Request, into any) (int, error) {
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

func (d dashboard) endpoint(path string) string {
	return strings.TrimSuffix(d.url, "/") + "/" + path
}
