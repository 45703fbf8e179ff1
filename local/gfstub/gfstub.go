// Package gfstub is a scriptable stand-in for GameFabric's allocate and
// ping-discovery endpoints, speaking the wire format of local/gfproto (which
// local/gfemu shares). Allocate follows GameFabric's documented protocol:
// POST with a bearer token from a list of valid tokens, body {region,
// attributes, payload}, 200 with {address, ip, ports, token, payload},
// errors as {"error": "..."}.
// Tests script each region's answers; unscripted regions have no capacity.
// Besides the documented answers, a scripted answer may fail the way real
// networks do: a 200 cut short by a connection reset, or one whose body
// never finishes.
// Ping plays a GameFabric Ping Service: its own bearer tokens (at first
// the allocator's, as in a single-token installation; SetPingTokens gives
// it a list of its own), served both at {PingPath} below the allocator's
// URL and on a listener of its own (PingURL). It answers our canonical
// shape, {"regions": {"<region>": [{"address", "port", "protocol"}]}}, a
// raw body, or a scripted failure.
package gfstub

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfproto"
)

// Response is one scripted answer.
type Response struct {
	Status     int           // 0 means 200 with an allocation
	Error      string        // the {"error"} message for non-2xx
	RawBody    string        // when set, sent verbatim instead
	RetryAfter string        // Retry-After header value
	Delay      time.Duration // wait before answering (client may time out)
	// ResetAfter > 0 sends the status line, the headers (with the whole
	// body's Content-Length) and only this many bytes of the body, then
	// resets the connection (TCP RST): an answer lost mid-body.
	ResetAfter int
	// StallAfter > 0 sends the headers and this many bytes of the body,
	// then nothing more until the client gives up (or MaxStall passes):
	// a body that never finishes.
	StallAfter int
}

// MaxStall bounds a StallAfter answer, so a client that never gives up
// cannot keep the stand-in (and its Close) waiting for ever.
const MaxStall = 10 * time.Second

// Call is what the stand-in received.
type Call struct {
	Region     string
	Attributes map[string]string
	Payload    map[string]any
	Token      string
	// Answered is the status of the answer sent in full; 0 when none was
	// (the client gave up, or the answer was cut short).
	Answered int
	// Server is the address handed out in a complete allocation; empty
	// for errors, raw bodies and answers cut short.
	Server string
	// At is when the call arrived.
	At time.Time
}

// Server is the stand-in.
type Server struct {
	*httptest.Server
	Path     string
	PingPath string

	mu       sync.Mutex
	tokens   gfproto.Tokens
	script   map[string][]Response
	sticky   map[string]Response
	calls    []Call
	nextPort int

	pingTokens  gfproto.Tokens
	pingRegions map[string][]PingTarget
	pingBody    string
	pingFailure *Response
	pingCalls   int
	pingService *httptest.Server
}

// PingServicePath is where the stand-in's own Ping Service listener answers.
const PingServicePath = "/v1/ping-discovery"

// PingTarget is one ping server of a region.
type PingTarget = gfproto.PingTarget

// New starts the stand-in on loopback. validTokens are the allocator's
// current tokens (GameFabric accepts any of its listed tokens); the Ping
// Service starts with a copy of them.
func New(validTokens ...string) *Server {
	s := &Server{Path: "/allocator/test/allocate", PingPath: "/ping", tokens: gfproto.NewTokens(validTokens...),
		script: map[string][]Response{}, sticky: map[string]Response{}, nextPort: 7000,
		pingTokens: gfproto.NewTokens(validTokens...), pingRegions: map[string][]PingTarget{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+s.Path, s.allocate)
	mux.HandleFunc("GET "+s.PingPath, s.ping)
	s.Server = httptest.NewServer(mux)
	ping := http.NewServeMux()
	ping.HandleFunc("GET "+PingServicePath, s.ping)
	s.pingService = httptest.NewServer(ping)
	return s
}

// PingURL is the Ping Service's own full URL (GAMEFABRIC_PING_URL): another
// host:port than the allocator's.
func (s *Server) PingURL() string { return s.pingService.URL + PingServicePath }

// Close stops both listeners.
func (s *Server) Close() {
	s.pingService.Close()
	s.Server.Close()
}

// URL of the allocate endpoint's base (GAMEFABRIC_URL) and path.
func (s *Server) BaseURL() string      { return s.Server.URL }
func (s *Server) AllocatePath() string { return strings.TrimPrefix(s.Path, "/") }

// Queue appends one-shot answers for region, used in order.
func (s *Server) Queue(region string, rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script[region] = append(s.script[region], rs...)
}

// Always sets the answer for region once its queue is empty.
func (s *Server) Always(region string, r Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sticky[region] = r
}

// SetTokens replaces the allocator's valid tokens (a rotation); the Ping
// Service's are SetPingTokens'.
func (s *Server) SetTokens(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = gfproto.NewTokens(tokens...)
}

// Calls returns what the stand-in received, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Allocations counts calls answered with a server.
func (s *Server) Allocations() int {
	n := 0
	for _, c := range s.Calls() {
		if c.Answered == http.StatusOK {
			n++
		}
	}
	return n
}

func (s *Server) allocate(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, gfproto.MaxBodyBytes))
	if err != nil {
		gfproto.WriteError(w, http.StatusBadRequest, "could not read body")
		return
	}
	token, ok := gfproto.BearerToken(r)
	if !ok || !s.validToken(token, false) {
		s.record(Call{Token: token, Answered: http.StatusUnauthorized})
		gfproto.WriteError(w, http.StatusUnauthorized, "invalid token")
		return
	}
	var body gfproto.AllocateRequest
	var payload map[string]any
	if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &body) != nil || body.Region == "" ||
		(len(body.Payload) > 0 && json.Unmarshal(body.Payload, &payload) != nil) {
		s.record(Call{Token: token, Answered: http.StatusBadRequest})
		gfproto.WriteError(w, http.StatusBadRequest, "body must be JSON with a region")
		return
	}
	// The call is recorded before it is answered: an answer cut short
	// reaches the client before this handler returns.
	i := s.record(Call{Region: body.Region, Attributes: body.Attributes, Payload: payload, Token: token})
	resp := s.next(body.Region)
	if resp.Delay > 0 {
		select {
		case <-time.After(resp.Delay):
		case <-r.Context().Done():
			return
		}
	}
	status, server := s.answer(w, r, resp, payload)
	s.mu.Lock()
	s.calls[i].Answered, s.calls[i].Server = status, server
	s.mu.Unlock()
}

func (s *Server) record(c Call) int {
	c.At = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	return len(s.calls) - 1
}

// validToken reports whether token is one of the allocator's valid
// tokens, or with ping one of the Ping Service's.
func (s *Server) validToken(token string, ping bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ping {
		return s.pingTokens.Accepts(token)
	}
	return s.tokens.Accepts(token)
}

func (s *Server) next(region string) Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.script[region]; len(q) > 0 {
		s.script[region] = q[1:]
		return q[0]
	}
	if r, ok := s.sticky[region]; ok {
		return r
	}
	return Response{Status: http.StatusNotFound, Error: "no game server available in region " + region}
}

// answer sends resp and returns the status sent in full (0 when it was cut
// short) and the address of the server it handed out, if any.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, resp Response, payload map[string]any) (int, string) {
	if resp.RetryAfter != "" {
		w.Header().Set("Retry-After", resp.RetryAfter)
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	var body []byte
	server := ""
	switch {
	case resp.RawBody != "":
		body = []byte(resp.RawBody)
	case status != http.StatusOK:
		body = gfproto.ErrorJSON(resp.Error)
	default:
		s.mu.Lock()
		port := s.nextPort
		s.nextPort++
		s.mu.Unlock()
		// The allocator returns what the server's callback answered; our
		// sample server echoes the game instance id it was given.
		server = fmt.Sprintf("127.0.0.1:%d", port)
		accepted, _ := json.Marshal(map[string]any{"accepted": payload["GameInstanceId"]})
		body, _ = json.Marshal(gfproto.AllocateResponse{Address: server, IP: "127.0.0.1",
			Ports: map[string]int{"game": port}, Token: "callback-" + strconv.Itoa(port), Payload: accepted})
		body = append(body, '\n')
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case resp.ResetAfter > 0:
		resetMidBody(w, status, body[:min(resp.ResetAfter, len(body))], len(body))
		return 0, ""
	case resp.StallAfter > 0:
		stall(w, r, status, body[:min(resp.StallAfter, len(body))], len(body))
		return 0, ""
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status, server
}

// resetMidBody writes the status line, the headers announcing size bytes
// and part of the body on the raw connection, then closes it with
// SO_LINGER 0 so the kernel sends RST: the client has read a 200 and fails
// while reading its body.
func resetMidBody(w http.ResponseWriter, status int, part []byte, size int) {
	w.Header().Set("Content-Length", strconv.Itoa(size))
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic("gfstub: cannot hijack to reset the connection: " + err.Error())
	}
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	_ = w.Header().Write(buf)
	_, _ = buf.WriteString("\r\n")
	_, _ = buf.Write(part)
	_ = buf.Flush()
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// stall sends the headers announcing size bytes and part of the body, then
// holds the connection open until the client goes away or MaxStall passes.
func stall(w http.ResponseWriter, r *http.Request, status int, part []byte, size int) {
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(status)
	_, _ = w.Write(part)
	_ = http.NewResponseController(w).Flush()
	select {
	case <-r.Context().Done():
	case <-time.After(MaxStall):
	}
}

// SetPingTokens replaces the Ping Service's valid tokens, which are then
// its own: the allocator's no longer work there.
func (s *Server) SetPingTokens(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingTokens = gfproto.NewTokens(tokens...)
}

// SetPingRegions sets what the Ping Service answers and clears any raw
// body or failure.
func (s *Server) SetPingRegions(regions map[string][]PingTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingRegions, s.pingBody, s.pingFailure = regions, "", nil
}

// SetPingBody makes the Ping Service answer 200 with raw, verbatim, until
// SetPingRegions is called: an answer in a shape other than ours.
func (s *Server) SetPingBody(raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingBody, s.pingFailure = raw, nil
}

// FailPing makes the Ping Service answer r (a status and error or a raw
// body) until SetPingRegions or SetPingBody is called.
func (s *Server) FailPing(r Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingFailure = &r
}

// PingCalls counts authorised ping-discovery calls.
func (s *Server) PingCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pingCalls
}

func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	if token, ok := gfproto.BearerToken(r); !ok || !s.validToken(token, true) {
		gfproto.WriteError(w, http.StatusUnauthorized, "invalid token")
		return
	}
	s.mu.Lock()
	s.pingCalls++
	failure, regions, body := s.pingFailure, s.pingRegions, s.pingBody
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case failure != nil:
		s.answer(w, r, *failure, nil)
	case body != "":
		_, _ = w.Write([]byte(body))
	default:
		gfproto.WriteJSON(w, http.StatusOK, gfproto.PingResponse{Regions: regions})
	}
}
