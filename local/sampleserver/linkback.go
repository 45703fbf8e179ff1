package main

import (
	"context"
	"log"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Instance states in the link-back answers that mean the game is over.
const (
	stateEnded     = "Ended"
	stateUnhealthy = "Unhealthy"
)

// linkBack calls the backend's game-server routes with the instance's
// PartnerGameToken, which is never logged.
type linkBack struct {
	client     *http.Client
	instanceID string
	base       string // …/v1/game-instances/{id}
	token      string
	log        *log.Logger
}

func newLinkBack(client *http.Client, a allocation, logger *log.Logger) *linkBack {
	return &linkBack{client: client, instanceID: a.GameInstanceID, token: a.PartnerGameToken, log: logger,
		base: strings.TrimSuffix(a.BackendAddress, "/") + "/v1/game-instances/" + url.PathEscape(a.GameInstanceID)}
}

type linkBody struct {
	Address    string         `json:"address"`
	Ports      map[string]int `json:"ports"`
	ServerName string         `json:"serverName"`
}

type instanceView struct {
	GameInstanceID string `json:"gameInstanceId"`
	State          string `json:"state"`
}

func (l *linkBack) call(ctx context.Context, op string, body any) (instanceView, error) {
	var v instanceView
	err := callJSON(ctx, l.client, op, http.MethodPost, l.base+"/"+op, "Bearer "+l.token, body, &v)
	return v, err
}

// linkPatience is the default ALLOCATION_LEASE + LINK_TIMEOUT: if the
// backend could not record this allocation, our link is what recovers it,
// and the backend accepts it until then (README, "in-doubt allocations").
const linkPatience = 3 * time.Minute

// link retries transient failures (unreachable, 409 ALLOCATION_IN_PROGRESS,
// 503) for linkPatience; anything else ends the attempt at once.
func (l *linkBack) link(ctx context.Context, body linkBody) error {
	return retry(ctx, linkPatience, backoff{lo: 250 * time.Millisecond, hi: 4 * time.Second}, l.log.Printf,
		func(ctx context.Context) error {
			_, err := l.call(ctx, "link", body)
			return err
		})
}

func (l *linkBack) heartbeat(ctx context.Context) (string, error) {
	v, err := l.call(ctx, "heartbeat", nil)
	return v.State, err
}

// end gets a few seconds only: on SIGTERM a supervisor's grace period is
// running (the fleet's default is 5 s).
func (l *linkBack) end(ctx context.Context, reason string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 4*time.Second)
	defer cancel()
	return retry(ctx, 4*time.Second, backoff{lo: 200 * time.Millisecond, hi: time.Second}, l.log.Printf,
		func(ctx context.Context) error {
			_, err := l.call(ctx, "end", map[string]string{"reason": reason})
			return err
		})
}
