// Package upstreamhttp makes one bounded JSON call to an upstream service
// (GameFabric's Allocator and Ping Service, an Agones allocator service)
// and types every way it can fail, so each client decides between
// retrying, falling back and giving up on the same terms.
package upstreamhttp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Limits on what is read from an upstream. Everything it sends may end up
// in our records and answers, so each piece is bounded where it enters.
const (
	MaxResponseBytes = 1 << 20 // a larger success body is treated as undecodable
	MaxErrorBodyKept = 512     // error bodies are kept for diagnostics up to this size
	MaxErrorText     = 256     // an error's message text is cut to this
)

// Kind classifies a failed call.
type Kind int

const (
	KindStatus    Kind = iota + 1 // the upstream answered non-2xx
	KindTimeout                   // no answer in time
	KindTransport                 // connection refused, reset, DNS ...
	KindDecode                    // a 2xx whose body is not usable
	// KindTLS: the TLS handshake failed: the peer's certificate is not
	// one we trust, the peer refused ours, or it asked for none when
	// mutual TLS is required. Nothing was sent.
	KindTLS
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
	case KindTLS:
		return "tls"
	}
	return "unknown"
}

// Error is every failure Call returns.
type Error struct {
	Kind       Kind
	Status     int           // HTTP status, 0 when there was no response
	Message    string        // the upstream's error text, or a description
	Body       string        // up to MaxErrorBodyKept bytes of the response body
	RetryAfter time.Duration // from Retry-After, 0 when absent
	// Unsent: the request never reached the upstream (the connection
	// could not be made), so it cannot have allocated anything.
	Unsent bool
	Err    error // the underlying error, if any
	// Service names who answered in Error(); empty is "allocator".
	Service string
}

// MayHaveAllocated reports whether the upstream may have handed out a
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

// ErrNoClientAuth: the server finished the TLS handshake without asking
// for our client certificate, where mutual TLS is required.
var ErrNoClientAuth = errors.New("the server did not ask for a client certificate (mutual TLS is off)")

// Call makes one JSON call with header and returns a 2xx body (at most
// MaxResponseBytes+1 bytes, so decoders can tell it was too large). Every
// failure is an *Error.
func Call(ctx context.Context, doer Doer, method, url string, header http.Header, body []byte) ([]byte, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, reader)
	if err != nil {
		return nil, &Error{Kind: KindTransport, Message: "build request: " + err.Error(), Unsent: true, Err: err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
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
		return nil, StatusError(resp, raw)
	}
	return raw, nil
}

// StatusError is a non-2xx answer: its text is the body's "error"
// (GameFabric) or "message" (grpc-gateway, Agones), else the status text.
func StatusError(resp *http.Response, raw []byte) *Error {
	e := &Error{Kind: KindStatus, Status: resp.StatusCode, Body: Truncate(raw)}
	var doc struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &doc) == nil && doc.Error+doc.Message != "" {
		e.Message = gameinstance.Clip(cmpOr(doc.Error, doc.Message), MaxErrorText)
	} else {
		// Nitrado's own client falls back to the status text as well.
		e.Message = http.StatusText(resp.StatusCode)
	}
	e.RetryAfter = gameinstance.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return e
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func transportError(ctx context.Context, err error) *Error {
	var ne net.Error
	unsent := notConnected(err)
	switch {
	case tlsFailure(err):
		return &Error{Kind: KindTLS, Message: gameinstance.Clip(err.Error(), MaxErrorText), Unsent: true, Err: err}
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		return &Error{Kind: KindTimeout, Message: "no answer before the attempt timeout", Unsent: unsent, Err: err}
	}
	return &Error{Kind: KindTransport, Message: gameinstance.Clip(err.Error(), MaxErrorText), Unsent: unsent, Err: err}
}

// notConnected: the failure came before a connection existed (refused,
// unresolvable, dial timeout), so the upstream never saw the request.
func notConnected(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return (errors.As(err, &op) && op.Op == "dial") || errors.As(err, &dns)
}

// tlsFailure: the handshake failed, on our side (the peer's certificate)
// or on the peer's (a TLS alert: it refused ours). A peer that refuses
// the handshake never reads the request, even when TLS 1.3 let us write it.
func tlsFailure(err error) bool {
	var verify *tls.CertificateVerificationError
	var op *net.OpError
	var record tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	return errors.Is(err, ErrNoClientAuth) || errors.As(err, &verify) || errors.As(err, &record) ||
		(errors.As(err, &op) && op.Op == "remote error") ||
		errors.As(err, &unknownCA) || errors.As(err, &invalid) || errors.As(err, &host)
}

// Truncate keeps at most MaxErrorBodyKept bytes as valid UTF-8.
func Truncate(b []byte) string { return gameinstance.Clip(string(b), MaxErrorBodyKept) }
