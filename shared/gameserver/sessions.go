package gameserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// SessionCallbackOptions configure a SessionCallback. None is required.
type SessionCallbackOptions struct {
	// Token is what the service must present as "Authorization: Bearer
	// <Token>"; "" mints one (NewCallbackToken). Offer puts it in the
	// room offer, so the server need not keep it.
	Token string
	// Buffer is how many sessions may wait unread on Sessions (default
	// DefaultSessionBuffer). A callback that finds it full answers 503:
	// the service gives the room back and places the session elsewhere.
	Buffer int
	// Remember is how many delivered GameInstanceIds are kept to spot a
	// repeated delivery (default DefaultRememberedSessions). Only the most
	// recent are kept, so memory stays bounded however long the server
	// runs; the service repeats a delivery within seconds, not sessions later.
	Remember int
	// Logger hears of every delivered and refused callback; slog.Default()
	// when nil. No token reaches it.
	Logger *slog.Logger
}

// Defaults of SessionCallbackOptions.
const (
	DefaultSessionBuffer      = 16
	DefaultRememberedSessions = 1024
)

// SessionCallback is the http.Handler a server that offers rooms mounts
// at its callback URL (any path: it answers every request it is given).
// For each POST it checks the bearer token in constant time, reads at
// most MaxPayloadSize bytes, validates the payload (ParsePayload) and
// delivers a new session's Payload on Sessions. It answers:
//
//   - 200 when the session was delivered, or had already been: a repeated
//     delivery (the service retrying after a lost answer) delivers
//     nothing, so one GameInstanceId starts one session;
//   - 401 for a missing or wrong token, 405 for another method, 413 for
//     a body over MaxPayloadSize, 400 for an invalid payload;
//   - 503 when the session cannot be delivered: Buffer sessions wait
//     unread, or Stop was called. The service then gives the room back.
//
// It is safe for concurrent use.
type SessionCallback struct {
	token    string   // never logged
	digest   [32]byte // of token: compared in constant time, whatever the length
	log      *slog.Logger
	sessions chan Payload

	mu      sync.Mutex
	stopped bool
	seen    recentIDs
}

// NewSessionCallback checks the options and fills in the defaults.
func NewSessionCallback(o SessionCallbackOptions) (*SessionCallback, error) {
	var problems []string
	if o.Token == "" {
		o.Token = NewCallbackToken()
	} else if msg := gameinstance.CallbackTokenProblem(o.Token); msg != "" {
		problems = append(problems, "Token "+msg)
	}
	if o.Buffer < 0 {
		problems = append(problems, "Buffer must not be negative")
	}
	if o.Remember < 0 {
		problems = append(problems, "Remember must not be negative")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("gameserver: SessionCallbackOptions: %s", strings.Join(problems, "; "))
	}
	if o.Buffer == 0 {
		o.Buffer = DefaultSessionBuffer
	}
	if o.Remember == 0 {
		o.Remember = DefaultRememberedSessions
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &SessionCallback{token: o.Token, digest: sha256.Sum256([]byte(o.Token)), log: o.Logger,
		sessions: make(chan Payload, o.Buffer), seen: newRecentIDs(o.Remember)}, nil
}

// Offer is the room offer for a link: capacity rooms (the linking
// session included), called back at callbackURL with this handler's
// token. Mount the handler where callbackURL points.
func (s *SessionCallback) Offer(callbackURL string, capacity int) *RoomOffer {
	return &RoomOffer{Capacity: capacity, CallbackURL: callbackURL, CallbackToken: s.token}
}

// Sessions delivers each new session's payload once. Give each its own
// Client (New); it links (without Rooms), heartbeats and ends on its own.
// The channel is closed by Stop; sessions delivered before stay readable
// and were accepted: end them if the server will not play them.
func (s *SessionCallback) Sessions() <-chan Payload { return s.sessions }

// Stop refuses every new session from now on (503) and closes Sessions.
// A repeated delivery of a session already delivered is still answered
// 200. Call it when the server is shutting down, then link one live
// session with Rooms capacity 0, so the service stops calling. It may be
// called more than once.
func (s *SessionCallback) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		s.stopped = true
		close(s.sessions)
	}
}

// ServeHTTP answers one session callback; SessionCallback's doc has the answers.
func (s *SessionCallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.refuse(w, r, http.StatusMethodNotAllowed, "the session callback takes POST only")
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		s.refuse(w, r, http.StatusUnauthorized, "wrong or missing bearer token")
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPayloadSize))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("the payload must be at most %d bytes", MaxPayloadSize))
		return
	case err != nil:
		s.refuse(w, r, http.StatusBadRequest, "reading the payload: "+err.Error())
		return
	}
	p, err := ParsePayload(raw)
	if errors.Is(err, ErrIncompletePayload) {
		err = fmt.Errorf("%w: not a whole JSON object", ErrInvalidPayload)
	}
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err.Error()) // names fields, never a token
		return
	}
	switch s.deliver(p) {
	case delivered:
		s.log.Info("session delivered", "payload", p)
	case repeated:
		s.log.Info("session delivered before; answered again, not started again", "payload", p)
	case stopped:
		s.refuse(w, r, http.StatusServiceUnavailable, "this game server takes no new sessions")
		return
	case full:
		s.refuse(w, r, http.StatusServiceUnavailable, "this game server has too many sessions waiting to start")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"gameInstanceId": p.GameInstanceID})
}

type delivery int

const (
	delivered delivery = iota
	repeated
	stopped
	full
)

// deliver hands p over unless it was before, or cannot be now. The send
// never blocks, so holding the lock across it is cheap, and it makes the
// check and the delivery one step: two concurrent deliveries of one id
// start one session.
func (s *SessionCallback) deliver(p Payload) delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.seen.has(p.GameInstanceID):
		return repeated
	case s.stopped:
		return stopped
	}
	select {
	case s.sessions <- p:
		s.seen.add(p.GameInstanceID)
		return delivered
	default:
		return full
	}
}

// authorized compares SHA-256 digests, so neither the token's bytes nor
// its length show in the time taken.
func (s *SessionCallback) authorized(r *http.Request) bool {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(got[:], s.digest[:]) == 1
}

func (s *SessionCallback) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.log.Warn("session callback refused", "status", status, "reason", msg, "remoteAddr", r.RemoteAddr)
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// recentIDs remembers the last n ids added: a set with a ring of
// insertion order, the oldest forgotten first.
type recentIDs struct {
	set  map[string]struct{}
	ring []string
	next int
}

func newRecentIDs(n int) recentIDs {
	return recentIDs{set: make(map[string]struct{}, n), ring: make([]string, n)}
}

func (r *recentIDs) has(id string) bool { _, ok := r.set[id]; return ok }

func (r *recentIDs) add(id string) {
	if old := r.ring[r.next]; old != "" {
		delete(r.set, old)
	}
	r.ring[r.next] = id
	r.set[id] = struct{}{}
	r.next = (r.next + 1) % len(r.ring)
}
