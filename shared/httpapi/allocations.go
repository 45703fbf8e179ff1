package httpapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Allocations is what the allocation routes need from the domain.
type Allocations interface {
	Allocate(ctx context.Context, req allocation.Request) (allocation.Result, error)
	Get(ctx context.Context, gameInstanceID string) (gameinstance.Record, error)
}

var _ Allocations = (*allocation.Service)(nil)

// Ender ends a game instance on the backend's behalf.
type Ender interface {
	EndByBackend(ctx context.Context, gameInstanceID string) (gameinstance.Record, error)
}

// AllocateRoutes maps each route pattern of the allocate function to its
// handler; the patterns match the HttpApi events in template.yaml.
func AllocateRoutes(svc Allocations, ender Ender) map[string]http.HandlerFunc {
	h := allocationHandlers{svc: svc, ender: ender}
	return map[string]http.HandlerFunc{
		"POST /v1/allocations":                    h.create,
		"GET /v1/allocations/{gameInstanceId}":    h.get,
		"DELETE /v1/allocations/{gameInstanceId}": h.end,
	}
}

type allocationHandlers struct {
	svc   Allocations
	ender Ender
}

// end is idempotent: ending an Ended instance answers 200 with it.
func (h allocationHandlers) end(w http.ResponseWriter, r *http.Request) {
	rec, err := h.ender.EndByBackend(r.Context(), r.PathValue("gameInstanceId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(rec))
}

func (h allocationHandlers) create(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, allocation.MaxBodyBytes+1))
	if err != nil {
		writeError(w, r, &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: "could not read the request body"})
		return
	}
	req, err := allocation.DecodeRequest(body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := h.svc.Allocate(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	switch {
	case res.Record.State == gameinstance.StateQueued:
		// Accepted, first time or replayed: the outcome is to come, at
		// Location, no sooner than Retry-After.
		status = http.StatusAccepted
		w.Header().Set("Location", "/v1/allocations/"+url.PathEscape(res.Record.GameInstanceID))
		setRetryAfter(w, res.Record)
	case res.Created:
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/allocations/"+url.PathEscape(res.Record.GameInstanceID))
	}
	logging.FromContext(r.Context()).Info("allocation answered", "gameInstanceId", res.Record.GameInstanceID,
		"created", res.Created, "state", res.Record.State, "region", res.Record.Region, "fallbackUsed", res.Record.FallbackUsed,
		"placement", res.Record.PlacedBy())
	writeJSON(w, status, viewOf(res.Record))
}

func (h allocationHandlers) get(w http.ResponseWriter, r *http.Request) {
	rec, err := h.svc.Get(r.Context(), r.PathValue("gameInstanceId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	setRetryAfter(w, rec)
	writeJSON(w, http.StatusOK, viewOf(rec))
}

// setRetryAfter tells a poller of a queued placement when its next attempt
// is due: whole seconds, at least 1.
func setRetryAfter(w http.ResponseWriter, rec gameinstance.Record) {
	if rec.State != gameinstance.StateQueued || rec.Queue == nil {
		return
	}
	wait := gameinstance.SecondsUntil(rec.Queue.NextAt, time.Now())
	w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)))
}

// recordView is the public shape of a record: no tokens, hashes or claims.
type recordView struct {
	GameInstanceID string                 `json:"gameInstanceId"`
	State          gameinstance.State     `json:"state"`
	Region         string                 `json:"region,omitempty"`
	FallbackUsed   bool                   `json:"fallbackUsed"`
	LatencyRelaxed bool                   `json:"latencyFilterRelaxed,omitempty"`
	Server         *gameinstance.Server   `json:"server,omitempty"`
	Placement      gameinstance.Placement `json:"placement,omitempty"`
	Attempts       []AttemptView          `json:"attempts"`
	Error          *gameinstance.Failure  `json:"error,omitempty"`
	// QueuedUntil: the placement was queued, to be placed by then.
	QueuedUntil string `json:"queuedUntil,omitempty"`
	CreatedAt   string `json:"createdAt,omitempty"`
	UpdatedAt   string `json:"updatedAt,omitempty"`
	lifecycleView
}

// lifecycleView is what the game server reported and the health sweep found.
type lifecycleView struct {
	LinkedAt        string                 `json:"linkedAt,omitempty"`
	LinkedServer    *gameinstance.LinkInfo `json:"linkedServer,omitempty"`
	RecoveredByLink bool                   `json:"recoveredByLink,omitempty"`
	LastHeartbeatAt string                 `json:"lastHeartbeatAt,omitempty"`
	EndedAt         string                 `json:"endedAt,omitempty"`
	EndReason       string                 `json:"endReason,omitempty"`
	UnhealthyAt     string                 `json:"unhealthyAt,omitempty"`
	UnhealthyReason string                 `json:"unhealthyReason,omitempty"`
}

func lifecycleOf(r gameinstance.Record) lifecycleView {
	return lifecycleView{
		LinkedAt:        formatTime(r.LinkedAt),
		LinkedServer:    r.LinkInfo,
		RecoveredByLink: r.RecoveredByLink,
		LastHeartbeatAt: formatTime(r.LastHeartbeatAt),
		EndedAt:         formatTime(r.EndedAt),
		EndReason:       r.EndReason,
		UnhealthyAt:     formatTime(r.UnhealthyAt),
		UnhealthyReason: r.UnhealthyReason,
	}
}

// AttemptView is one step of the decision trace as the API answers it:
// no upstream body, which may quote GameFabric's answers.
type AttemptView struct {
	Region          string `json:"region"`
	Reason          string `json:"reason,omitempty"`
	Status          int    `json:"status"`
	Error           string `json:"error,omitempty"`
	DurationMs      int64  `json:"durationMs"`
	SuspectedOrphan bool   `json:"suspectedOrphan,omitempty"`
	RateLimited     bool   `json:"rateLimited,omitempty"`
	AllocatorRegion string `json:"allocatorRegion,omitempty"`
	// Placement and Server: a session callback to a game server with a
	// free room (room attempts only).
	Placement gameinstance.Placement `json:"placement,omitempty"`
	Server    string                 `json:"server,omitempty"`
	// MaxPlayerLatencyMs: the latency cap in force for the attempt.
	MaxPlayerLatencyMs float64 `json:"maxPlayerLatencyMs,omitempty"`
}

func viewOf(r gameinstance.Record) recordView {
	v := recordView{
		GameInstanceID: r.GameInstanceID,
		State:          r.State,
		Region:         r.Region,
		FallbackUsed:   r.FallbackUsed,
		LatencyRelaxed: r.LatencyRelaxed,
		Server:         r.Server.Public(),
		Placement:      r.PlacedBy(),
		Attempts:       AttemptsOf(r),
		Error:          r.Failure,
		CreatedAt:      formatTime(r.CreatedAt),
		UpdatedAt:      formatTime(r.UpdatedAt),
		lifecycleView:  lifecycleOf(r),
	}
	if r.Queue != nil {
		v.QueuedUntil = formatTime(r.Queue.Until)
	}
	return v
}

// AttemptsOf is r's decision trace as the API answers it (never nil).
func AttemptsOf(r gameinstance.Record) []AttemptView {
	out := make([]AttemptView, 0, len(r.Attempts))
	for _, a := range r.Attempts {
		out = append(out, AttemptView{Region: a.Region, Reason: a.Reason, Status: a.Status, Error: a.Error,
			DurationMs: a.DurationMs, SuspectedOrphan: a.SuspectedOrphan, RateLimited: a.RateLimited, AllocatorRegion: a.AllocatorRegion,
			Placement: a.Placement, Server: a.Server, MaxPlayerLatencyMs: a.MaxPlayerLatencyMs})
	}
	return out
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// NewHandler serves routes (pattern → handler) on one mux. Unknown paths get
// a JSON 404 and known paths with another method a JSON 405.
func NewHandler(routes map[string]http.HandlerFunc, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
		var method, path string
		if _, err := fmt.Sscanf(pattern, "%s %s", &method, &path); err == nil {
			allowed[path] = append(allowed[path], method)
		}
	}
	for path, methods := range allowed {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			for _, m := range methods {
				w.Header().Add("Allow", m)
			}
			writeError(w, r, &gameinstance.Error{Code: codeMethodNotAllowed, Message: fmt.Sprintf("%s is not allowed on %s", r.Method, path)})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, &gameinstance.Error{Code: gameinstance.CodeNotFound, Message: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)})
	})
	return withLogging(mux, log)
}
