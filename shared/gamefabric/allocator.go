// Package gamefabric is a client for GameFabric's allocator API, as documented
// publicly: POST {url} with a bearer token and {region, attributes, payload};
// 200 answers {address, ip, ports, token, payload}; errors are any non-2xx
// with {"error": "..."}; 429 means back off.
package gamefabric

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Limits on what we read from the allocator. Everything GameFabric sends
// ends up in our records and answers, so each piece is bounded here, where
// it enters: a record must stay far below DynamoDB's 400 KB item limit and
// an answer far below 64 KB, whatever the allocator sends.
const (
	MaxResponseBytes = 1 << 20 // a larger success body is treated as undecodable
	MaxErrorBodyKept = 512     // error bodies are kept for diagnostics up to this size
	MaxErrorText     = 256     // the {"error"} text (or any error message) is cut to this
	MaxAddressLen    = 255     // a longer address or ip is not an allocation
	MaxPorts         = 32      // more named ports than this is not an allocation
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

// Kind classifies a failed call so callers can decide between retrying,
// falling back and giving up.
type Kind int

const (
	KindStatus    Kind = iota + 1 // the allocator answered non-2xx
	KindTimeout                   // no answer in time
	KindTransport                 // connection refused, reset, DNS, TLS ...
	KindDecode                    // a 2xx whose body is not a usable allocation
)

func (k Kind) String() string {
	switch k {
	case KindStatus:
		return "status"
	case KindTimeout:
		return "timeout"
	case KindTransport:
		return "transport"
	case KindDecode:
		return "decode"
	}
	return "unknown"
}

// Error is every failure Allocate returns.
type Error struct {
	Kind       Kind
	Status     int           // HTTP status, 0 when there was no response
	Message    string        // the allocator's {"error"} text, or a description
	Body       string        // up to MaxErrorBodyKept bytes of the response body
	RetryAfter time.Duration // from Retry-After on 429/503, 0 when absent
	// Unsent: the request never reached the allocator (the connection
	// could not be made), so it cannot have allocated anything.
	Unsent bool
	Err    error // the underlying error, if any
	// Service names who answered in Error(); empty is the allocator. The
	// Ping Service is another service with other tokens, and its 401 must
	// not read like the allocator's.
	Service string
}

// MayHaveAllocated reports whether the allocator may have handed out a
// server although this call got no usable answer: it timed out, its
// gateway gave up (504), the answer broke off, or a 2xx was unusable. Such
// a server is a suspected orphan.
func (e *Error) MayHaveAllocated() bool {
	switch e.Kind {
	case KindTimeout, KindTransport, KindDecode:
		return !e.Unsent
	case KindStatus:
		return e.Status == http.StatusGatewayTimeout
	}
	return false
}

func (e *Error) Error() string {
	who := e.Service
	if who == "" {
		who = "allocator"
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s answered %d: %s", who, e.Status, e.Message)
	}
	return fmt.Sprintf("%s %s: %s", who, e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Doer is the HTTP client; *http.Client satisfies it.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

var _ Doer = (*http.Client)(nil)

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

// call makes one bearer-authenticated JSON call and returns a 2xx body (at
// most MaxResponseBytes+1 bytes, so decoders can tell it was too large).
// Every failure is an *Error.
func call(ctx context.Context, doer Doer, method, url, token string, body []byte) ([]byte, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, reader)
	if err != nil {
		return nil, &Error{Kind: KindTransport, Message: "build request: " + err.Error(), Unsent: true, Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := doer.Do(req)
	if err != nil {
		return nil, transportError(ctx, err)
	}
	defer resp.Body.Close()
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil && ok {
		// A 2xx that broke off: the server was allocated, we cannot say which.
		return nil, transportError(ctx, fmt.Errorf("read response: %w", err))
	}
	if !ok {
		// An error answer cut short is still that error answer.
		return nil, statusError(resp, raw)
	}
	return raw, nil
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

func statusError(resp *http.Response, raw []byte) *Error {
	e := &Error{Kind: KindStatus, Status: resp.StatusCode, Body: truncate(raw)}
	var doc struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &doc) == nil && doc.Error != "" {
		e.Message = gameinstance.Clip(doc.Error, MaxErrorText)
	} else {
		// Nitrado's own client falls back to the status text as well.
		e.Message = http.StatusText(resp.StatusCode)
	}
	e.RetryAfter = gameinstance.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return e
}

func transportError(ctx context.Context, err error) *Error {
	var ne net.Error
	unsent := notConnected(err)
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		return &Error{Kind: KindTimeout, Message: "no answer before the attempt timeout", Unsent: unsent, Err: err}
	}
	return &Error{Kind: KindTransport, Message: gameinstance.Clip(err.Error(), MaxErrorText), Unsent: unsent, Err: err}
}

// notConnected: the failure came before a connection existed (refused,
// unresolvable, dial timeout), so the allocator never saw the request.
func notConnected(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return (errors.As(err, &op) && op.Op == "dial") || errors.As(err, &dns)
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

// truncate keeps at most MaxErrorBodyKept bytes as valid UTF-8.
func truncate(b []byte) string { return gameinstance.Clip(string(b), MaxErrorBodyKept) }
