package main

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// registration is the registry's POST /servers body.
type registration struct {
	Address            string            `json:"address"`
	Attributes         map[string]string `json:"attributes"`
	RequiredAttributes []string          `json:"requiredAttributes,omitempty"`
	Callback           callbackRef       `json:"callback"`
	Ports              map[string]int    `json:"ports"`
	Priority           int               `json:"priority"`
	Region             string            `json:"region"`
	Timeout            int               `json:"timeout"`
}

type callbackRef struct {
	Token string `json:"token"`
	URL   string `json:"url"`
}

// registry talks to the Allocator's registry on the server's behalf: the
// sidecar's calls. The calls to our backend go through shared/gameserver.
type registry struct {
	client   *http.Client
	url      string // …/servers
	token    string // never logged
	body     registration
	interval time.Duration // keep-alive period: a third of the timeout, so one lost keep-alive is survivable
	log      *log.Logger

	registrations atomic.Int32
}

// newRegistry describes this server to the registry. The ping port is the
// game port: a TCP connect is all a latency probe needs here.
func newRegistry(cfg Config, client *http.Client, logger *log.Logger, gamePort, allocPort int) *registry {
	if cfg.Attributes == nil {
		cfg.Attributes = map[string]string{} // registered as {}, not null
	}
	return &registry{client: client, url: cfg.RegistryURL, token: cfg.RegistryToken, log: logger,
		interval: cfg.RegistryTimeout / 3,
		body: registration{
			Address:            net.JoinHostPort(cfg.Host, strconv.Itoa(gamePort)),
			Attributes:         cfg.Attributes,
			RequiredAttributes: cfg.RequiredAttrs,
			Callback:           callbackRef{Token: cryptorand.Text(), URL: net.JoinHostPort(cfg.Host, strconv.Itoa(allocPort)) + "/allocate"},
			Ports:              map[string]int{"game": gamePort, "alloc": allocPort, "ping": gamePort},
			Priority:           cfg.Priority,
			Region:             cfg.Region,
			// Whole seconds on the wire, rounded up so a short timeout
			// never reads as none.
			Timeout: int((cfg.RegistryTimeout + time.Second - 1) / time.Second),
		}}
}

func (r *registry) serverURL() string { return r.url + "/" + url.PathEscape(r.body.Address) }

// call sends body (nil: none) and returns the answer's status, and an
// error for a transport failure or a non-2xx answer. Only a short head
// of an answer's body is kept: enough to diagnose, too little to fill logs.
func (r *registry) call(ctx context.Context, op, method, url string, body any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body) // our own types: cannot fail
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("%s: HTTP %d: %s", op, resp.StatusCode, bytes.TrimSpace(head))
	}
	return resp.StatusCode, nil
}

// deregister is best effort: the registration expires on its own anyway.
func (r *registry) deregister(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	switch status, err := r.call(ctx, "deregister", http.MethodDelete, r.serverURL(), nil); {
	case err == nil:
		r.log.Printf("deregistered %s", r.body.Address)
	case status == http.StatusNotFound:
		r.log.Printf("deregister: %s was not registered", r.body.Address)
	default:
		r.log.Printf("%v (the registration will expire)", err)
	}
}

// maintain registers and keeps the registration alive until ctx ends,
// which is how allocation (or shutdown) stops the keep-alives.
func (r *registry) maintain(ctx context.Context) {
	var backoff time.Duration
	for ctx.Err() == nil {
		if _, err := r.call(ctx, "register", http.MethodPost, r.url, r.body); err != nil {
			if ctx.Err() != nil {
				return
			}
			// Doubling from 250 ms to 5 s, each pause jittered down to half,
			// so that a fleet restarted at once does not register in lockstep.
			backoff = min(max(2*backoff, 250*time.Millisecond), 5*time.Second)
			pause := backoff/2 + rand.N(backoff/2+1)
			r.log.Printf("%v; retrying in %s", err, pause.Round(time.Millisecond))
			_ = wait.Sleep(ctx, pause)
			continue
		}
		backoff = 0
		r.registrations.Add(1)
		r.log.Printf("registered %s in region %s (timeout %ds)", r.body.Address, r.body.Region, r.body.Timeout)
		if err := r.keepAlives(ctx); err != nil && ctx.Err() == nil {
			r.log.Printf("%v; registering again", err)
		}
	}
}

var errRemoved = errors.New("the registry dropped the registration")

// keepAlives returns errRemoved on a 404 and nil when ctx ends. Other
// failures are retried at the next tick: with a period of a third of the
// timeout, a single failure does not lose the registration.
func (r *registry) keepAlives(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		status, err := r.call(ctx, "keep-alive", http.MethodPost, r.serverURL()+"/keepalive", map[string]int{"timeout": r.body.Timeout})
		switch {
		case err == nil || ctx.Err() != nil:
		case status == http.StatusNotFound:
			return errRemoved
		default:
			r.log.Print(err)
		}
	}
}
