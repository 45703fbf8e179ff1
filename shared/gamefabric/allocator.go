// Package gamefabric is a client for GameFabric's allocator API, as documented
// publicly: POST {url} with a bearer token and {region, attributes, payload};
// 200 answers {address, ip, ports, token, payload}; errors are any non-2xx
// with {"error": "..."}; 429 means back off.
package gamefabric

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

// Limits on what we read from the allocator. Everything GameFabric sends
// ends up in our records and answers, so each piece is bounded here, where
// it enters: a record must stay far below DynamoDB's 400 KB item limit and
// an answer far below 64 KB, whatever the allocator sends. The bounds of
// the call itself are upstreamhttp's.
const (
	MaxResponseBytes = upstreamhttp.MaxResponseBytes
	MaxErrorBodyKept = upstreamhttp.MaxErrorBodyKept
	MaxErrorText     = upstreamhttp.MaxErrorText
	MaxAddressLen    = 255 // a longer address or ip is not an allocation
	MaxPorts         = 32  // more named ports than this is not an allocation
	MaxPortName      = 64
)

// AllocateRequest is the body of an allocation call.
type AllocateRequest struct {
	Region     string            `json:"region"`
	Attributes map[string]string `json:"attributes"`
	Payload    any               `json:"payload"`
}

// Allocation is a successful allocation. Token is GameFabric's callback
// token: a credential shared with the game server, never shown to callers.
type Allocation struct {
	Address string          `json:"address"`
	IP      string          `json:"ip"`
	Ports   map[string]int  `json:"ports"`
	Token   string          `json:"token"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Kind, Error and Doer are upstreamhttp's: every upstream call fails in
// the same typed ways.
type (
	Kind  = upstreamhttp.Kind
	Error = upstreamhttp.Error
	Doer  = upstreamhttp.Doer
)

const (
	KindStatus    = upstreamhttp.KindStatus
	KindTimeout   = upstreamhttp.KindTimeout
	KindTransport = upstreamhttp.KindTransport
	KindDecode    = upstreamhttp.KindDecode
	KindTLS       = upstreamhttp.KindTLS
)

// Client calls one allocator endpoint.
type Client struct {
	http Doer
	url  string
}

// NewClient calls url (the full allocate URL) through doer.
func NewClient(doer Doer, url string) *Client {
	return &Client{http: doer, url: url}
}

// Allocate makes one allocation call. The caller bounds it with ctx.
func (c *Client) Allocate(ctx context.Context, token string, req AllocateRequest) (*Allocation, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode allocate request: %w", err)
	}
	raw, err := call(ctx, c.http, http.MethodPost, c.url, token, body)
	if err != nil {
		return nil, err
	}
	return DecodeAllocation(raw)
}

// call makes one bearer-authenticated JSON call (upstreamhttp.Call).
func call(ctx context.Context, doer Doer, method, url, token string, body []byte) ([]byte, error) {
	return upstreamhttp.Call(ctx, doer, method, url, http.Header{"Authorization": {"Bearer " + token}}, body)
}

// DecodeAllocation reads a 2xx allocate body.
func DecodeAllocation(raw []byte) (*Allocation, error) {
	if len(raw) > MaxResponseBytes {
		return nil, &Error{Kind: KindDecode, Message: fmt.Sprintf("response body exceeds %d bytes", MaxResponseBytes)}
	}
	var a Allocation
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, &Error{Kind: KindDecode, Message: "response is not an allocation JSON object", Body: truncate(redactToken(raw)), Err: err}
	}
	a.Address = strings.TrimSpace(a.Address)
	if problem := a.problem(); problem != "" {
		return nil, &Error{Kind: KindDecode, Message: "response " + problem, Body: truncate(redactToken(raw))}
	}
	if a.IP == "" {
		// The address is documented as ip:port; recover the ip if omitted.
		if host, _, err := net.SplitHostPort(a.Address); err == nil {
			a.IP = host
		}
	}
	return &a, nil
}

// problem says what makes a decoded answer unusable, "" when nothing does:
// the documented shape within our bounds.
func (a *Allocation) problem() string {
	switch {
	case a.Address == "":
		return "has no address"
	case len(a.Address) > MaxAddressLen || len(a.IP) > MaxAddressLen:
		return fmt.Sprintf("has an address or ip longer than %d bytes", MaxAddressLen)
	case len(a.Ports) > MaxPorts:
		return fmt.Sprintf("lists %d ports, more than %d", len(a.Ports), MaxPorts)
	}
	for name, port := range a.Ports {
		if name == "" || len(name) > MaxPortName || port < 1 || port > 65535 {
			return fmt.Sprintf("has a port that is not named (at most %d bytes) and 1-65535", MaxPortName)
		}
	}
	return ""
}

// tokenValue matches a "token" member's string value, even in a body cut
// short: a 2xx body carries GameFabric's callback token, a credential.
// Compiled on first use: only an undecodable answer needs it, and a
// package-level regexp would be compiled at every cold start.
var tokenValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)("token"\s*:\s*")(?:[^"\\]|\\.)*"?`)
})

// redactToken keeps an undecodable 2xx body useful for diagnosis without
// the callback token in it.
func redactToken(raw []byte) []byte {
	return tokenValue().ReplaceAll(raw, []byte(`${1}[redacted]"`))
}

func truncate(b []byte) string { return upstreamhttp.Truncate(b) }
