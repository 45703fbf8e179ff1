package agones

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

// Limits on what is kept of an answer: it ends up in our records and
// answers, so each piece is bounded where it enters.
const (
	MaxAddressLen = 255
	MaxPorts      = 32
	MaxPortName   = 64
	MaxNameLen    = 253 // a Kubernetes object name (GameServer, Node)
)

// Service names the allocator service in errors.
const Service = "Agones allocator"

// Allocation is a usable AllocationResponse.
type Allocation struct {
	GameServerName string
	NodeName       string
	// Address is the game server's host: the answer's address, else its
	// ExternalDNS or ExternalIP entry.
	Address  string
	Ports    map[string]int
	Counters map[string]Count
}

// Count is a Counter as the answer reports it.
type Count struct{ Count, Capacity int64 }

// Client calls one allocator service, keeping its connections alive
// across calls for as long as the identity it speaks as does not change.
type Client struct {
	url string

	mu   sync.Mutex
	http map[[32]byte]*http.Client // by Identity.same
}

// maxIdentities bounds the clients kept: one per rotation in flight.
const maxIdentities = 4

// NewClient calls the allocator service at base (https://host:port).
func NewClient(base string) *Client {
	return &Client{url: strings.TrimRight(base, "/") + "/gameserverallocation", http: map[[32]byte]*http.Client{}}
}

// httpFor is id's HTTP client: the secret is read again every
// TOKEN_CACHE_TTL, and an unchanged one keeps its connections.
func (c *Client) httpFor(id *Identity) *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.http[id.same]; h != nil {
		return h
	}
	if len(c.http) >= maxIdentities {
		for k, h := range c.http {
			h.CloseIdleConnections()
			delete(c.http, k)
		}
	}
	c.http[id.same] = id.httpClient()
	return c.http[id.same]
}

// Allocate makes one allocation call as id. The caller bounds it with
// ctx. Every failure is an *upstreamhttp.Error naming the service.
func (c *Client) Allocate(ctx context.Context, id *Identity, req AllocationRequest) (*Allocation, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode allocation request: %w", err)
	}
	raw, err := upstreamhttp.Call(ctx, c.httpFor(id), http.MethodPost, c.url, nil, body)
	var a *Allocation
	if err == nil {
		a, err = DecodeAllocation(raw)
	}
	var e *upstreamhttp.Error
	if errors.As(err, &e) {
		e.Service = Service
		e.Body = redactAnnotations(e.Body)
	}
	return a, err
}

// DecodeAllocation reads a 2xx answer: anything but an AllocationResponse
// naming a game server with an address and 1-MaxPorts ports is a
// KindDecode error.
func DecodeAllocation(raw []byte) (*Allocation, error) {
	fail := func(msg string, err error) (*Allocation, error) {
		return nil, &upstreamhttp.Error{Kind: upstreamhttp.KindDecode, Message: "response " + msg, Body: upstreamhttp.Truncate(raw), Err: err}
	}
	if len(raw) > upstreamhttp.MaxResponseBytes {
		return fail(fmt.Sprintf("exceeds %d bytes", upstreamhttp.MaxResponseBytes), nil)
	}
	var r AllocationResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return fail("is not an AllocationResponse JSON object", err)
	}
	a := &Allocation{GameServerName: r.GameServerName, NodeName: r.NodeName, Address: hostOf(r), Ports: map[string]int{}}
	switch {
	case a.Address == "":
		return fail("has no address", nil)
	case len(a.Address) > MaxAddressLen || strings.IndexFunc(a.Address, unusable) >= 0:
		return fail(fmt.Sprintf("has an address that is not a host name or IP of at most %d bytes", MaxAddressLen), nil)
	case len(r.Ports) == 0:
		return fail("has no ports", nil)
	case len(r.Ports) > MaxPorts:
		return fail(fmt.Sprintf("lists %d ports, more than %d", len(r.Ports), MaxPorts), nil)
	case len(r.GameServerName) > MaxNameLen || len(r.NodeName) > MaxNameLen:
		return fail(fmt.Sprintf("has a gameServerName or nodeName longer than %d bytes", MaxNameLen), nil)
	}
	for _, p := range r.Ports {
		if _, dup := a.Ports[p.Name]; dup || p.Name == "" || len(p.Name) > MaxPortName || strings.IndexFunc(p.Name, unusable) >= 0 || p.Port < 1 || p.Port > 65535 {
			return fail(fmt.Sprintf("has a port that is not uniquely named (at most %d bytes) and 1-65535", MaxPortName), nil)
		}
		a.Ports[p.Name] = int(p.Port)
	}
	for name, c := range r.Counters {
		if a.Counters == nil {
			a.Counters = map[string]Count{}
		}
		a.Counters[name] = Count{Count: value(c.Count), Capacity: value(c.Capacity)}
	}
	return a, nil
}

// hostOf is the game server's host: status.address, or else the external
// DNS name or IP among its addresses.
func hostOf(r AllocationResponse) string {
	if a := strings.TrimSpace(r.Address); a != "" {
		return a
	}
	for _, want := range []string{AddressExternalDN, AddressExternalIP} {
		for _, a := range r.Addresses {
			if a.Type == want && strings.TrimSpace(a.Address) != "" {
				return strings.TrimSpace(a.Address)
			}
		}
	}
	return ""
}

func value(v *Int64) int64 {
	if v == nil {
		return 0
	}
	return int64(*v)
}

func unusable(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }

// annotationsValue matches an "annotations" object, even one cut short:
// an answer echoes the payload we annotated, PartnerGameToken included.
var annotationsValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`("annotations"\s*:\s*)\{[^}]*\}?`)
})

// redactAnnotations keeps a kept body useful for diagnosis without the
// game server's annotations (our payload, tokens included).
func redactAnnotations(body string) string {
	if !strings.Contains(body, `"annotations"`) {
		return body
	}
	return annotationsValue().ReplaceAllString(body, `${1}{"[redacted]":""}`)
}
