// Package allocationsapi serves the backend's allocation routes
// (AllocateFunction): POST, GET and DELETE /v1/allocations.
package allocationsapi

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
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

// Routes maps each route pattern of the allocate function to its
// handler; the patterns match the HttpApi events in template.yaml.
func Routes(svc Allocations, ender Ender) map[string]http.HandlerFunc {
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
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.ViewOf(rec))
}

func (h allocationHandlers) create(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, allocation.MaxBodyBytes+1))
	if err != nil {
		httpapi.WriteError(w, r, &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: "could not read the request body"})
		return
	}
	req, err := allocation.DecodeRequest(body)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	res, err := h.svc.Allocate(r.Context(), req)
	if err != nil {
		httpapi.WriteError(w, r, err)
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
	httpapi.WriteJSON(w, status, httpapi.ViewOf(res.Record))
}

func (h allocationHandlers) get(w http.ResponseWriter, r *http.Request) {
	rec, err := h.svc.Get(r.Context(), r.PathValue("gameInstanceId"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	setRetryAfter(w, rec)
	httpapi.WriteJSON(w, http.StatusOK, httpapi.ViewOf(rec))
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
