package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// LinkBack is what the game-server routes need from the lifecycle service.
type LinkBack interface {
	Link(ctx context.Context, id, token string, info *gameinstance.LinkInfo, offer *gameinstance.RoomOffer) (gameinstance.Record, error)
	Heartbeat(ctx context.Context, id, token string) (gameinstance.Record, error)
	// HeartbeatSessions is Heartbeat renewing, too, every other session
	// holding a room on the caller's game server; others is those sessions.
	HeartbeatSessions(ctx context.Context, id, token string) (rec gameinstance.Record, others []gameinstance.Record, err error)
	End(ctx context.Context, id, token, reason string) (gameinstance.Record, error)
}

// LinkBackRoutes are the routes game servers call with their
// PartnerGameToken. Every answer advises heartbeatInterval (whole seconds,
// at least 1) as how often to heartbeat.
func LinkBackRoutes(svc LinkBack, heartbeatInterval time.Duration) map[string]http.HandlerFunc {
	h := linkBackHandlers{svc: svc, interval: max(1, int(heartbeatInterval/time.Second))}
	return map[string]http.HandlerFunc{
		"POST /v1/game-instances/{gameInstanceId}/link":      h.link,
		"POST /v1/game-instances/{gameInstanceId}/heartbeat": h.heartbeat,
		"POST /v1/game-instances/{gameInstanceId}/end":       h.end,
	}
}

// NewLinkBackHandler serves the link-back function's routes.
func NewLinkBackHandler(svc LinkBack, heartbeatInterval time.Duration, log *slog.Logger) http.Handler {
	return NewHandler(LinkBackRoutes(svc, heartbeatInterval), log)
}

type linkBackHandlers struct {
	svc      LinkBack
	interval int // seconds
}

// allSessions reads a heartbeat's optional body: {"allSessions": true}
// renews every session holding a room on the caller's game server with
// this one call. Heartbeats took no body and ignored one sent, so anything
// else in it still is (a server sending something there keeps its game);
// only an allSessions that is not a boolean is refused, since its sender
// asked for something it would not get.
func allSessions(r io.Reader) (bool, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxLinkBackBody))
	var body map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &body) != nil || body["allSessions"] == nil {
		return false, nil
	}
	var all bool
	if err := json.Unmarshal(body["allSessions"], &all); err != nil {
		return false, &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: "allSessions must be true or false"}
	}
	return all, nil
}

const maxLinkBackBody = 16 << 10

// BearerToken reads "Authorization: Bearer <token>".
func BearerToken(header string) (string, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > 4096 {
		return "", &gameinstance.Error{Code: gameinstance.CodeUnauthorized,
			Message: "send the game instance's PartnerGameToken as Authorization: Bearer <token>"}
	}
	return token, nil
}

type linkBody struct {
	Address    string         `json:"address"`
	Ports      map[string]int `json:"ports"`
	ServerName string         `json:"serverName"`
	// Rooms offers sessions at once on this server (lifecycle.Policy.Offer
	// validates it against the instance's record).
	Rooms *roomsBody `json:"rooms"`
}

type roomsBody struct {
	Capacity      *int   `json:"capacity"`
	CallbackURL   string `json:"callbackUrl"`
	CallbackToken string `json:"callbackToken"`
}

// offer is the rooms object as the domain takes it.
func (b linkBody) offer() (*gameinstance.RoomOffer, error) {
	if b.Rooms == nil {
		return nil, nil
	}
	if b.Rooms.Capacity == nil {
		return nil, &gameinstance.Error{Code: gameinstance.CodeInvalidRequest,
			Message: "rooms.capacity is required: the sessions this server hosts at once, this one included (0 closes it)"}
	}
	return &gameinstance.RoomOffer{Capacity: *b.Rooms.Capacity, CallbackURL: b.Rooms.CallbackURL, CallbackToken: b.Rooms.CallbackToken}, nil
}

type endBody struct {
	Reason string `json:"reason"`
}

// DecodeOptionalBody reads an optional JSON object strictly into v; an
// empty body leaves v as it is.
func DecodeOptionalBody(r io.Reader, v any) error {
	raw, err := io.ReadAll(io.LimitReader(r, maxLinkBackBody+1))
	if err != nil {
		return &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: "could not read the request body"}
	}
	if len(raw) > maxLinkBackBody {
		return &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: fmt.Sprintf("request body exceeds %d bytes", maxLinkBackBody)}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		msg := "request body must be a JSON object"
		if err != nil {
			msg += ": " + strings.TrimPrefix(err.Error(), "json: ")
		}
		return &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: msg}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: "request body has data after the JSON object"}
	}
	return nil
}

func (b linkBody) info() (*gameinstance.LinkInfo, error) {
	var problems []string
	if len(b.Address) > 255 || (b.Address != "" && !validHostPort(b.Address)) {
		// A recovering link records this address as the instance's server.
		problems = append(problems, "address must be host:port (at most 255 characters, port 1-65535), e.g. 203.0.113.10:7777")
	}
	if len(b.ServerName) > 255 {
		problems = append(problems, "serverName must be at most 255 characters")
	}
	if len(b.Ports) > 32 {
		problems = append(problems, "ports may list at most 32 ports")
	}
	for name, port := range b.Ports {
		if name == "" || len(name) > 64 || port < 1 || port > 65535 {
			problems = append(problems, fmt.Sprintf("port %q must be named (at most 64 characters) and 1-65535", name))
		}
	}
	if len(problems) > 0 {
		return nil, &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: strings.Join(problems, "; ")}
	}
	if b.Address == "" && b.ServerName == "" && len(b.Ports) == 0 {
		return nil, nil
	}
	return &gameinstance.LinkInfo{Address: b.Address, Ports: b.Ports, ServerName: b.ServerName}, nil
}

// validHostPort: a host (name, IPv4, or bracketed IPv6) and a port 1-65535.
func validHostPort(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || strings.ContainsAny(host, " /?#@") {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// call authenticates the request shape, runs fn and answers the server view.
func (h linkBackHandlers) call(w http.ResponseWriter, r *http.Request, fn func(id, token string) (gameinstance.Record, error)) {
	h.callSessions(w, r, func(id, token string) (gameinstance.Record, []apishape.Session, error) {
		rec, err := fn(id, token)
		return rec, nil, err
	})
}

// callSessions is call for an answer that may list the server's other
// sessions (nil: not asked, so not in the answer).
func (h linkBackHandlers) callSessions(w http.ResponseWriter, r *http.Request, fn func(id, token string) (gameinstance.Record, []apishape.Session, error)) {
	token, err := BearerToken(r.Header.Get("Authorization"))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	rec, sessions, err := fn(r.PathValue("gameInstanceId"), token)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, apishape.GameServerState{GameInstanceID: rec.GameInstanceID, State: rec.State, HeartbeatIntervalSeconds: h.interval,
		Lifecycle: lifecycleOf(rec), Sessions: sessions})
}

func (h linkBackHandlers) link(w http.ResponseWriter, r *http.Request) {
	h.call(w, r, func(id, token string) (gameinstance.Record, error) {
		var body linkBody
		if err := DecodeOptionalBody(r.Body, &body); err != nil {
			return gameinstance.Record{}, err
		}
		info, err := body.info()
		if err != nil {
			return gameinstance.Record{}, err
		}
		offer, err := body.offer()
		if err != nil {
			return gameinstance.Record{}, err
		}
		return h.svc.Link(r.Context(), id, token, info, offer)
	})
}

func (h linkBackHandlers) heartbeat(w http.ResponseWriter, r *http.Request) {
	h.callSessions(w, r, func(id, token string) (gameinstance.Record, []apishape.Session, error) {
		all, err := allSessions(r.Body)
		if err != nil {
			return gameinstance.Record{}, nil, err
		}
		if !all {
			rec, err := h.svc.Heartbeat(r.Context(), id, token)
			return rec, nil, err
		}
		rec, others, err := h.svc.HeartbeatSessions(r.Context(), id, token)
		// Asked, so listed even when there are none ([]).
		sessions := make([]apishape.Session, len(others))
		for i, o := range others {
			sessions[i] = apishape.Session{GameInstanceID: o.GameInstanceID, State: o.State}
		}
		return rec, sessions, err
	})
}

func (h linkBackHandlers) end(w http.ResponseWriter, r *http.Request) {
	h.call(w, r, func(id, token string) (gameinstance.Record, error) {
		var body endBody
		if err := DecodeOptionalBody(r.Body, &body); err != nil {
			return gameinstance.Record{}, err
		}
		if len(body.Reason) > 255 {
			return gameinstance.Record{}, &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: "reason must be at most 255 characters"}
		}
		return h.svc.End(r.Context(), id, token, body.Reason)
	})
}
