// Package gameserver is the SDK a dedicated game server written in Go uses
// against the allocation service's game-server routes: it reads the
// allocation payload GameFabric's sidecar writes (WaitForPayload), links
// the server to its game instance (Link, retried while the allocation is
// still being recorded), heartbeats at the interval the backend names until
// the backend says the instance is over (RunHeartbeats, StartHeartbeats),
// and ends it with a reason (End).
//
// Every call is POST {pragmaBackendAddress}/v1/game-instances/{id}/{link,
// heartbeat,end} with Authorization: Bearer {PartnerGameToken}; docs/gameservers.md,
// "HTTP contract for other engines", has the same sequence for servers
// that cannot use Go. The token never appears in logs or errors.
//
// # Rooms: several sessions on one server
//
// A server can host more game instances (sessions) than the one it was
// allocated for. It mounts a SessionCallback on a port of its own and
// offers rooms when its first session links (LinkRequest.Rooms =
// SessionCallback.Offer(url, capacity), the capacity counting that
// session). The service then places further sessions on it by POSTing
// each one's payload to the callback URL with "Authorization: Bearer
// <callback token>"; SessionCallback checks, de-duplicates and delivers
// them on Sessions, or answers 503 when it cannot, and the service places
// the session elsewhere. Each delivered session gets its own Client and
// links (without Rooms), heartbeats and ends on its own. To close, call
// SessionCallback.Stop and link one live session with capacity 0; the
// sessions in play are unaffected. The callback token never appears in
// logs, errors or printed values either.
package gameserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Options configure a Client. Only Payload is required.
type Options struct {
	// Payload is the allocation payload (WaitForPayload): the backend
	// address, the game instance and its PartnerGameToken.
	Payload Payload
	// HTTPClient defaults to one with a 10 s timeout per request.
	HTTPClient *http.Client
	// Logger hears of retries and transient failures; slog.Default() when nil.
	Logger *slog.Logger
	// HealthPeriod is the deployment's HEALTH_PERIOD (default 30 s):
	// heartbeats default to every third of it until an answer names the
	// interval the deployment wants (heartbeatIntervalSeconds).
	HealthPeriod time.Duration
	// LinkPatience is how long Link retries (default ALLOCATION_LEASE +
	// LINK_TIMEOUT, 3 min): if the backend could not record the
	// allocation, the link is what recovers it, and the backend accepts it
	// until then.
	LinkPatience time.Duration
	// EndPatience is how long End retries (default 10 s). On SIGTERM keep
	// it inside the supervisor's grace period.
	EndPatience time.Duration
	// MaxWait caps one wait between tries, a Retry-After included
	// (default 10 s).
	MaxWait time.Duration
}

// Defaults of Options.
const (
	DefaultRequestTimeout = 10 * time.Second
	DefaultHealthPeriod   = defaults.HealthPeriod
	DefaultLinkPatience   = defaults.AllocationLease + defaults.LinkTimeout
	DefaultEndPatience    = 10 * time.Second
	DefaultMaxWait        = 10 * time.Second
)

// Client calls one game instance's routes. It is safe for concurrent use.
type Client struct {
	http         *http.Client
	log          *slog.Logger
	id           string
	base         string // {pragmaBackendAddress}/v1/game-instances/{id}
	token        string // never logged
	healthPeriod time.Duration
	linkPatience time.Duration
	endPatience  time.Duration
	maxWait      time.Duration
	advised      atomic.Int64 // the last answer's heartbeat interval (time.Duration); 0 before one
}

// New checks the payload and fills in the defaults.
func New(o Options) (*Client, error) {
	if err := o.Payload.Validate(); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"HealthPeriod", o.HealthPeriod}, {"LinkPatience", o.LinkPatience}, {"EndPatience", o.EndPatience}, {"MaxWait", o.MaxWait}} {
		if d.v < 0 {
			return nil, fmt.Errorf("gameserver: Options.%s must not be negative", d.name)
		}
	}
	c := &Client{http: o.HTTPClient, log: o.Logger, id: o.Payload.GameInstanceID, token: o.Payload.PartnerGameToken,
		base:         strings.TrimSuffix(o.Payload.BackendAddress, "/") + "/v1/game-instances/" + url.PathEscape(o.Payload.GameInstanceID),
		healthPeriod: orDefault(o.HealthPeriod, DefaultHealthPeriod), linkPatience: orDefault(o.LinkPatience, DefaultLinkPatience),
		endPatience: orDefault(o.EndPatience, DefaultEndPatience), maxWait: orDefault(o.MaxWait, DefaultMaxWait)}
	if c.http == nil {
		c.http = &http.Client{Timeout: DefaultRequestTimeout}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.log = c.log.With("gameInstanceId", c.id)
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// GameInstanceID is the instance this client links, heartbeats and ends.
func (c *Client) GameInstanceID() string { return c.id }

// HealthPeriod is the HEALTH_PERIOD the client was configured with.
func (c *Client) HealthPeriod() time.Duration { return c.healthPeriod }

// LinkRequest is what the server may report about itself when it links;
// every field is optional. A link that recovers an allocation the backend
// could not record makes Address the instance's server.
type LinkRequest struct {
	Address    string         `json:"address,omitempty"` // host:port players connect to, e.g. 203.0.113.10:7777
	Ports      map[string]int `json:"ports,omitempty"`   // named ports, e.g. {"game": 7777}
	ServerName string         `json:"serverName,omitempty"`
	// Rooms offers rooms for more sessions (SessionCallback.Offer); nil
	// links a dedicated server. Its token is in the JSON, never in
	// LogValue or the printed forms.
	Rooms *RoomOffer `json:"rooms,omitempty"`
}

// LogValue keeps the room offer's token out of slog output: a JSON
// handler would otherwise marshal Rooms, token included.
func (r LinkRequest) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("address", r.Address), slog.Any("ports", r.Ports), slog.String("serverName", r.ServerName)}
	if r.Rooms != nil {
		attrs = append(attrs, slog.Any("rooms", *r.Rooms))
	}
	return slog.GroupValue(attrs...)
}

// The answers' shapes are the service's own (apishape), defined once for
// the handlers, this SDK, the allocation client and docs/openapi.yaml.
type (
	// Instance is every route's answer: the game instance as the backend
	// has it (its lifecycle: LinkedAt … UnhealthyReason), how often the
	// deployment wants heartbeats (HeartbeatIntervalSeconds,
	// RunHeartbeats' default once an answer has said it) and, answering
	// HeartbeatSessions, the other sessions holding a room on this game
	// server as the call left them (Sessions: Linked, renewed; Ended,
	// Unhealthy, over: close that session's game).
	Instance = apishape.GameServerState
	// Lifecycle is what the server reported and the health sweep found.
	Lifecycle = apishape.Lifecycle
	// LinkInfo is what the server reported about itself when it linked
	// (Instance.LinkedServer): a LinkRequest's address, ports and name.
	LinkInfo = apishape.LinkInfo
	// Session is another session on the same game server.
	Session = apishape.Session
)

// maxAnswer bounds what is read of an answer: ours are well under 2 KiB.
const maxAnswer = 64 << 10

// maxMessage bounds an error message kept from an answer.
const maxMessage = 512

// call makes one request. body nil sends none. secrets besides the
// client's token (a room offer's) are redacted from an error's message.
func (c *Client) call(ctx context.Context, op string, body any, secrets ...string) (*Instance, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("gameserver: %s: %w", op, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+op, rd)
	if err != nil {
		return nil, fmt.Errorf("gameserver: %s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// *url.Error names the URL, which holds no credential.
		return nil, fmt.Errorf("gameserver: %s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("gameserver: %s: reading the answer: %w", op, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.apiError(op, resp, raw, secrets)
	}
	var inst Instance
	if len(raw) > maxAnswer {
		return nil, &badAnswerError{op: op, err: fmt.Errorf("larger than %d bytes", maxAnswer)}
	}
	if err := json.Unmarshal(raw, &inst); err != nil {
		return nil, &badAnswerError{op: op, err: err}
	}
	if inst.State == "" {
		return nil, &badAnswerError{op: op, err: fmt.Errorf("no state in HTTP %d answer", resp.StatusCode)}
	}
	if inst.HeartbeatIntervalSeconds > 0 {
		c.advised.Store(int64(advisedInterval(inst.HeartbeatIntervalSeconds)))
	}
	return &inst, nil
}

// Bounds of an advised heartbeat interval: whatever an answer says, a
// server neither floods the backend nor falls silent.
const (
	minAdvisedInterval = time.Second
	maxAdvisedInterval = 10 * time.Minute
)

func advisedInterval(seconds int) time.Duration {
	return min(max(time.Duration(seconds)*time.Second, minAdvisedInterval), maxAdvisedInterval)
}

// apiError reads {"error": {"code", "message", "state"}}, or API
// Gateway's {"message"}, or keeps a short head of anything else.
func (c *Client) apiError(op string, resp *http.Response, raw []byte, secrets []string) *APIError {
	e := &APIError{Op: op, Status: resp.StatusCode, RetryAfter: gameinstance.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	var body struct {
		Error   *apishape.ErrorDetail `json:"error"`
		Message string                `json:"message"`
	}
	switch {
	case json.Unmarshal(raw, &body) == nil && body.Error != nil:
		e.Code, e.Message, e.State = body.Error.Code, body.Error.Message, body.Error.State
	case body.Message != "":
		e.Message = body.Message
	default:
		e.Message = strings.TrimSpace(string(raw))
	}
	e.Message = clip(c.redact(e.Message, secrets...), maxMessage)
	return e
}

// redact: no answer of ours echoes a token, but a proxy's might.
func (c *Client) redact(s string, secrets ...string) string {
	s = strings.ReplaceAll(s, c.token, "[redacted]")
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// clip keeps at most n bytes of s, cut at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
