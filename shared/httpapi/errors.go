// Package httpapi is the HTTP face of the service: plain net/http handlers
// that serve both API Gateway (through the Lambda adapter) and the local stack.
package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// statusOf is the one place where error codes become HTTP statuses.
var statusOf = map[gameinstance.Code]int{
	gameinstance.CodeInvalidRequest:          http.StatusBadRequest,
	gameinstance.CodeAllocationInProgress:    http.StatusConflict,
	gameinstance.CodeIdempotencyMismatch:     http.StatusConflict,
	gameinstance.CodeNoCapacity:              http.StatusServiceUnavailable,
	gameinstance.CodeRateLimited:             http.StatusTooManyRequests,
	gameinstance.CodeUpstreamTimeout:         http.StatusGatewayTimeout,
	gameinstance.CodeAllocationFailed:        http.StatusBadGateway,
	gameinstance.CodeUpstreamInvalidResponse: http.StatusBadGateway,
	gameinstance.CodeNotFound:                http.StatusNotFound,
	gameinstance.CodeUnauthorized:            http.StatusUnauthorized,
	gameinstance.CodeInvalidState:            http.StatusConflict,
	gameinstance.CodeInternal:                http.StatusInternalServerError,
	gameinstance.CodeUnavailable:             http.StatusServiceUnavailable,
	gameinstance.CodePlacementTimedOut:       http.StatusServiceUnavailable,
	gameinstance.CodePlacementCancelled:      http.StatusConflict,
	gameinstance.CodeInvalidMatch:            http.StatusUnprocessableEntity,
	gameinstance.CodeMatchTooLarge:           http.StatusRequestEntityTooLarge,
	codeMethodNotAllowed:                     http.StatusMethodNotAllowed,
}

const codeMethodNotAllowed gameinstance.Code = "METHOD_NOT_ALLOWED"

// StatusOf returns the HTTP status for an error code.
func StatusOf(code gameinstance.Code) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// WriteError renders err as {"error": {...}}. Internal causes are logged,
// never sent: the client gets a request id to quote instead.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var e *gameinstance.Error
	if !errors.As(err, &e) {
		e = &gameinstance.Error{Code: gameinstance.CodeInternal, Err: err}
	}
	status := StatusOf(e.Code)
	detail := apishape.ErrorDetail{Code: e.Code, Message: e.Message, State: e.State, Attempts: e.Attempts}
	log := logging.FromContext(r.Context())
	if status >= 500 {
		log.Error("request failed", "code", e.Code, "error", err)
	} else {
		log.Info("request rejected", "code", e.Code, "message", e.Message)
	}
	if e.Code == gameinstance.CodeInternal {
		detail.Message = "internal error"
		if lc, ok := lambdacontext.FromContext(r.Context()); ok {
			detail.Message += "; quote request id " + lc.AwsRequestID
		}
		detail.Attempts = nil
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="game-instances"`)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter.Seconds())))
	}
	WriteJSON(w, status, apishape.ErrorResponse{Error: detail})
}

func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
