package gameserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// State is a game instance's state, as the routes answer it.
type State = gameinstance.State

// The states a game server sees.
const (
	StateAllocating = gameinstance.StateAllocating
	StateAllocated  = gameinstance.StateAllocated
	StateLinked     = gameinstance.StateLinked
	StateUnhealthy  = gameinstance.StateUnhealthy
	StateEnded      = gameinstance.StateEnded
	StateFailed     = gameinstance.StateFailed
)

// Code is the error code of a refused call ({"error": {"code"}}).
type Code = gameinstance.Code

// The codes the game-server routes answer.
const (
	CodeInvalidRequest       = gameinstance.CodeInvalidRequest       // 400: a bad body
	CodeUnauthorized         = gameinstance.CodeUnauthorized         // 401: wrong token, or no such game instance
	CodeNotFound             = gameinstance.CodeNotFound             // 404: no such route (a wrong backend address)
	CodeAllocationInProgress = gameinstance.CodeAllocationInProgress // 409: not recorded yet; retried
	CodeInvalidState         = gameinstance.CodeInvalidState         // 409: the state does not allow the call
	CodeInternal             = gameinstance.CodeInternal             // 500: a retry will not cure it
	CodeUnavailable          = gameinstance.CodeUnavailable          // 503: retried
)

// Sentinels for a game instance that is over: RunHeartbeats and the
// Heartbeater return errors wrapping them (errors.Is) when the backend
// answers the state, so the server shuts down.
var (
	// ErrEnded: the backend ended the instance (DELETE /v1/allocations), or
	// the server itself did.
	ErrEnded = errors.New("game instance ended")
	// ErrUnhealthy: the health sweep gave up on the instance (it never
	// linked, or missed heartbeats). It is not revived; end it and exit.
	ErrUnhealthy = errors.New("game instance unhealthy")
)

// APIError is every answer other than 2xx. Code is "" when the body was
// not this API's error (e.g. API Gateway's own 429 {"message"}).
type APIError struct {
	Op         string // "link", "heartbeat" or "end"
	Status     int
	Code       Code
	Message    string
	State      State         // the instance's state, when the error names it
	RetryAfter time.Duration // from Retry-After, 0 when absent
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gameserver: %s: HTTP %d", e.Op, e.Status)
	if e.Code != "" {
		b.WriteString(" " + string(e.Code))
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.State != "" && !strings.Contains(e.Message, string(e.State)) {
		b.WriteString(" (state " + string(e.State) + ")")
	}
	return b.String()
}

// Retryable reports whether the same call may succeed later: the
// instance is still being recorded (409 ALLOCATION_IN_PROGRESS), the
// store or the gateway is overloaded or failed (429, 503, 502, 504), or a
// 5xx that is not our INTERNAL (a Lambda crash or timeout has no code).
// Every call is safe to repeat.
func (e *APIError) Retryable() bool {
	switch {
	case e.Code == CodeAllocationInProgress:
		return true
	case e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout:
		return true
	case e.Status >= 500:
		return e.Code != CodeInternal
	}
	return false
}

// IsCode reports whether err is an *APIError with code.
func IsCode(err error, code Code) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == code
}

// retryable: worth another try. Transport failures and timeouts of one
// call are; an ended ctx, a refusal other than the above and an answer we
// cannot read are not.
func retryable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var api *APIError
	if errors.As(err, &api) {
		return api.Retryable()
	}
	var bad *badAnswerError
	return !errors.As(err, &bad)
}

// badAnswerError: a 2xx we could not decode, e.g. from a proxy in front of
// the wrong address. Retrying the same address would not help.
type badAnswerError struct {
	op  string
	err error
}

func (e *badAnswerError) Error() string {
	return fmt.Sprintf("gameserver: %s: unreadable answer: %v", e.op, e.err)
}
func (e *badAnswerError) Unwrap() error { return e.err }
