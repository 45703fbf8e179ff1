package gfemu

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// registerRequest is the body of the Registry's POST …/servers. Pointers
// tell a missing field from its zero value where the protocol requires or
// defaults it.
type registerRequest struct {
	Address            *string           `json:"address"`
	Attributes         map[string]string `json:"attributes"`
	RequiredAttributes []string          `json:"requiredAttributes"`
	Callback           *Callback         `json:"callback"`
	Ports              map[string]int    `json:"ports"`
	Priority           *int              `json:"priority"`
	Region             string            `json:"region"`
	Timeout            *int              `json:"timeout"`
}

// Callback is where and with which token the Allocator calls an allocated
// server.
type Callback struct {
	Token string `json:"token"`
	URL   string `json:"url"`
}

// keepAliveRequest is the (optional) body of POST …/servers/{addr}/keepalive.
type keepAliveRequest struct {
	Timeout *int `json:"timeout"`
}

// registration is the Registry's answer to register and keep-alive.
type registration struct {
	Address   string    `json:"address"`
	Region    string    `json:"region"`
	Priority  int       `json:"priority"`
	Timeout   int       `json:"timeout"` // seconds
	ExpiresAt time.Time `json:"expiresAt"`
}

// Bounds on registration fields. The timeout ceiling only catches unit
// mistakes (milliseconds sent as seconds); GameFabric documents none.
const (
	defaultTimeoutSeconds = 60
	maxTimeoutSeconds     = 24 * 60 * 60
)

// serverOf validates a registration and builds the Server it describes
// (without registration times). Only what GameFabric documents as required
// is required; the rest is checked for shape only.
func serverOf(req registerRequest) (Server, error) {
	if req.Address == nil {
		return Server{}, errors.New("address is required (host:port)")
	}
	if err := checkAddress(*req.Address); err != nil {
		return Server{}, err
	}
	if req.Priority == nil {
		return Server{}, errors.New("priority is required")
	}
	if *req.Priority < 0 {
		return Server{}, fmt.Errorf("priority must be >= 0, got %d", *req.Priority)
	}
	if strings.TrimSpace(req.Region) != req.Region {
		return Server{}, fmt.Errorf("region %q has surrounding spaces", req.Region)
	}
	for k := range req.Attributes {
		if strings.TrimSpace(k) == "" {
			return Server{}, errors.New("attributes must not have an empty key")
		}
	}
	for _, k := range req.RequiredAttributes {
		if strings.TrimSpace(k) == "" {
			return Server{}, errors.New("requiredAttributes must not hold an empty key")
		}
	}
	for name, p := range req.Ports {
		if strings.TrimSpace(name) == "" {
			return Server{}, errors.New("ports must not have an empty name")
		}
		if p < 1 || p > 65535 {
			return Server{}, fmt.Errorf("port %q must be 1-65535, got %d", name, p)
		}
	}
	timeout, err := timeoutOf(req.Timeout)
	if err != nil {
		return Server{}, err
	}
	s := Server{
		Address:            *req.Address,
		Region:             req.Region,
		Priority:           *req.Priority,
		Attributes:         req.Attributes,
		RequiredAttributes: req.RequiredAttributes,
		Ports:              req.Ports,
		Timeout:            timeout,
	}
	if req.Callback != nil {
		cb, err := callbackOf(*req.Callback)
		if err != nil {
			return Server{}, err
		}
		s.Callback = &cb
	}
	return s.clone(), nil
}

func checkAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || strings.ContainsAny(host, " /") {
		return fmt.Errorf("address %q must be host:port", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
		return fmt.Errorf("address %q must have a port 1-65535", addr)
	}
	return nil
}

// callbackOf checks the callback and gives a schemeless URL http://, as
// GameFabric's sidecar registers "ip:port/path". The token may be empty:
// GameFabric only recommends protecting the endpoint with one.
func callbackOf(c Callback) (Callback, error) {
	if c.URL == "" {
		return Callback{}, errors.New("callback.url is required when callback is given")
	}
	raw := c.URL
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Callback{}, fmt.Errorf("callback.url %q must be [http[s]://]host:port/path", c.URL)
	}
	return Callback{Token: c.Token, URL: u.String()}, nil
}

// timeoutOf reads a keep-alive window in seconds; nil means the default.
func timeoutOf(secs *int) (time.Duration, error) {
	if secs == nil {
		return defaultTimeoutSeconds * time.Second, nil
	}
	if *secs < 1 || *secs > maxTimeoutSeconds {
		return 0, fmt.Errorf("timeout must be 1-%d seconds, got %d", maxTimeoutSeconds, *secs)
	}
	return time.Duration(*secs) * time.Second, nil
}
