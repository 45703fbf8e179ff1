package main

import (
	"context"
	"errors"
	"log"
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

// registry talks to the allocator's registry on the server's behalf.
type registry struct {
	client   *http.Client
	url      string // …/servers
	token    string
	body     registration
	interval time.Duration // keep-alive period: a third of the timeout, so one lost keep-alive is survivable
	log      *log.Logger

	registrations atomic.Int32
}

// newRegistry describes this server to the registry. The ping port is the
// game port: a TCP connect is all a latency probe needs here.
func newRegistry(cfg Config, client *http.Client, logger *log.Logger, address, callbackURL string, allocPort int) *registry {
	_, port, _ := net.SplitHostPort(address)
	gamePort, _ := strconv.Atoi(port)
	attrs := cfg.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	return &registry{client: client, url: cfg.RegistryURL, token: cfg.RegistryToken, log: logger,
		interval: cfg.RegistryTimeout / 3,
		body: registration{
			Address:            address,
			Attributes:         attrs,
			RequiredAttributes: cfg.RequiredAttrs,
			Callback:           callbackRef{Token: newToken(), URL: callbackURL},
			Ports:              map[string]int{"game": gamePort, "alloc": allocPort, "ping": gamePort},
			Priority:           cfg.Priority,
			Region:             cfg.Region,
			// Whole seconds on the wire, rounded up so a short timeout
			// never reads as none.
			Timeout: int((cfg.RegistryTimeout + time.Second - 1) / time.Second),
		}}
}

func (r *registry) serverURL() string { return r.url + "/" + url.PathEscape(r.body.Address) }

func (r *registry) register(ctx context.Context) error {
	return callJSON(ctx, r.client, "register", http.MethodPost, r.url, "Bearer "+r.token, r.body)
}

func (r *registry) keepAlive(ctx context.Context) error {
	return callJSON(ctx, r.client, "keep-alive", http.MethodPost, r.serverURL()+"/keepalive", "Bearer "+r.token,
		map[string]int{"timeout": r.body.Timeout})
}

// deregister is best effort: the registration expires on its own anyway.
func (r *registry) deregister(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := callJSON(ctx, r.client, "deregister", http.MethodDelete, r.serverURL(), "Bearer "+r.token, nil)
	switch {
	case err == nil:
		r.log.Printf("deregistered %s", r.body.Address)
	case statusOf(err) == http.StatusNotFound:
		r.log.Printf("deregister: %s was not registered", r.body.Address)
	default:
		r.log.Printf("%v (the registration will expire)", err)
	}
}

// reRegistered tells whether a registration was renewed after the
// registry dropped one. Such a renewal may race with an allocation of
// the dropped one, leaving a stale entry behind.
func (r *registry) reRegistered() bool { return r.registrations.Load() > 1 }

// maintain registers and keeps the registration alive until ctx ends,
// which is how allocation (or shutdown) stops the keep-alives.
func (r *registry) maintain(ctx context.Context) {
	b := backoff{lo: 250 * time.Millisecond, hi: 5 * time.Second}
	for ctx.Err() == nil {
		if err := r.register(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			pause := b.next()
			r.log.Printf("%v; retrying in %s", err, pause.Round(time.Millisecond))
			_ = wait.Sleep(ctx, pause)
			continue
		}
		b.reset()
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
		err := r.keepAlive(ctx)
		switch {
		case err == nil || ctx.Err() != nil:
		case statusOf(err) == http.StatusNotFound:
			return errRemoved
		default:
			r.log.Print(err)
		}
	}
}
