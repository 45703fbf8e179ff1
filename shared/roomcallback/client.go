// Package roomcallback makes the session callback that places a game
// instance in a game server's free room: POST {callbackUrl} with
// Authorization: Bearer {callbackToken} and the payload GameFabric's
// allocation carries. A 2xx within the caller's deadline places the
// session; anything else does not. Nothing a game server answers is kept
// but its status: no body, no redirect is followed, and neither the URL
// (which may carry a secret in its query) nor a token appears in errors.
package roomcallback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/rooms"
)

// maxAnswer bounds what is read of an answer (and then thrown away): a
// keep-alive connection is reused only once its answer is read.
const maxAnswer = 64 << 10

// maxError bounds an error text kept in an attempt.
const maxError = 256

// Client calls game servers back. The zero value is not usable; New.
type Client struct{ http *http.Client }

var _ rooms.Caller = (*Client)(nil)

// New is a client on transport (nil: a clone of http.DefaultTransport)
// that follows no redirect: a callback's answer is the server's own.
func New(transport http.RoundTripper) *Client {
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &Client{http: &http.Client{Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Call makes one session callback, bounded by ctx.
func (c *Client) Call(ctx context.Context, callbackURL, token string, payload allocation.Payload) rooms.CallResult {
	start := time.Now()
	r := c.call(ctx, callbackURL, token, payload)
	r.Duration = time.Since(start)
	return r
}

func (c *Client) call(ctx context.Context, callbackURL, token string, payload allocation.Payload) rooms.CallResult {
	body, err := json.Marshal(payload)
	if err != nil {
		return rooms.CallResult{Error: "session callback: encode the payload: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callbackURL, bytes.NewReader(body))
	if err != nil {
		return rooms.CallResult{Error: "session callback: the callback URL is unusable"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.http.Do(req)
	if err != nil {
		return failed(ctx, err, token)
	}
	defer resp.Body.Close()
	// The answer is not used; reading it (bounded) lets the connection be
	// reused. A 2xx whose body then breaks off has still said yes.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	r := rooms.CallResult{Status: resp.StatusCode, Sent: true, OK: resp.StatusCode >= 200 && resp.StatusCode <= 299}
	if !r.OK {
		r.Error = fmt.Sprintf("session callback answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return r
}

// failed describes a callback that got no answer: timed out (ctx's
// deadline or the transport's), refused (never sent), or broken off.
func failed(ctx context.Context, err error, token string) rooms.CallResult {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // without the URL
	}
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		return rooms.CallResult{TimedOut: true, Sent: true, Error: "session callback got no answer in time"}
	case errors.As(err, &op) && op.Op == "dial":
		return rooms.CallResult{Error: clip("session callback not delivered: "+op.Err.Error(), token)}
	}
	return rooms.CallResult{Sent: true, Error: clip("session callback failed: "+err.Error(), token)}
}

func clip(s, token string) string {
	if token != "" {
		s = strings.ReplaceAll(s, token, "[redacted]")
	}
	return gameinstance.Clip(s, maxError)
}
