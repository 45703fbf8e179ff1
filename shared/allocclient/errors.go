package allocclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// The service's error codes (the "code" of an error answer). docs/api.md
// says when each is answered.
const (
	CodeInvalidRequest       = "INVALID_REQUEST"           // 400: fix the request first
	CodeAllocationInProgress = "ALLOCATION_IN_PROGRESS"    // 409: another call is allocating it; retried
	CodeIdempotencyMismatch  = "IDEMPOTENCY_MISMATCH"      // 409: the id was used with other parameters
	CodeNoCapacity           = "NO_CAPACITY"               // 503: no region had a server; retried
	CodeRateLimited          = "RATE_LIMITED"              // 429: GameFabric's rate limits; retried
	CodeUpstreamTimeout      = "UPSTREAM_TIMEOUT"          // 504: GameFabric did not answer in time; retried
	CodeAllocationFailed     = "ALLOCATION_FAILED"         // 502: GameFabric refused; needs a change first
	CodeUpstreamInvalid      = "UPSTREAM_INVALID_RESPONSE" // 502: an Agones allocator's answer was not an allocation
	CodeNotFound             = "NOT_FOUND"                 // 404: no such game instance
	CodeUnauthorized         = "UNAUTHORIZED"              // 401: the game-server routes only
	CodeInvalidState         = "INVALID_STATE"             // 409: e.g. ending a Failed instance
	CodeInternal             = "INTERNAL"                  // 500: needs an operator
	CodeServiceUnavailable   = "SERVICE_UNAVAILABLE"       // 503: a dependency failed for now; retried
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"        // 405
	// A queued placement's end, as a Failed record's Error.Code (what
	// AllocateAndWait returns); an error answer would be 409 and 503.
	CodePlacementCancelled = "PLACEMENT_CANCELLED" // DELETE while Queued
	CodePlacementTimedOut  = "PLACEMENT_TIMED_OUT" // no server before QueuedUntil
	// A FlexMatch match's end that is the match's own fault, as its
	// Failed record's Error.Code (GET of the matchId).
	CodeInvalidMatch  = "INVALID_MATCH"   // its customEventData cannot be placed
	CodeMatchTooLarge = "MATCH_TOO_LARGE" // more than 200 players, or its event above 128 KiB
)

// ErrAnswerTooLarge: the answer exceeded the read limit, which no answer
// of the service does; something else is answering.
var ErrAnswerTooLarge = errors.New("answer exceeds the read limit")

// ErrNoGameInstanceID: Get or End was called without a game instance id.
var ErrNoGameInstanceID = errors.New("allocclient: a gameInstanceId is required")

// Error is a non-2xx answer. Code is empty when the answer was not the
// service's own (API Gateway's throttling and bare 5xx answer
// {"message": ...} only). AllocateAndWait also returns one for a placement
// that ended Failed: Status is then the 200 that carried the record, Code
// and Message its error, Allocation the record.
type Error struct {
	Status  int
	Code    string
	Message string
	// RetryAfter is the answer's Retry-After; 0 when it had none.
	RetryAfter time.Duration
	// Allocation is what the answer says about the game instance when it
	// carries its decision trace or state (Attempts, State, Error); nil
	// otherwise.
	Allocation *Allocation

	op    string // "POST /v1/allocations"
	tries int
}

func (e *Error) Error() string {
	var b strings.Builder
	failedRecord := e.Status/100 == 2 // the answer succeeded, the placement did not
	fmt.Fprintf(&b, "allocclient: %s: ", e.op)
	if failedRecord {
		b.WriteString(StateFailed)
	} else {
		fmt.Fprintf(&b, "%d", e.Status)
	}
	switch {
	case e.Code != "":
		b.WriteString(" " + e.Code)
	case !failedRecord:
		b.WriteString(" " + http.StatusText(e.Status))
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (Retry-After %s)", e.RetryAfter)
	}
	if e.tries > 1 {
		fmt.Fprintf(&b, " after %d tries", e.tries)
	}
	return b.String()
}

// Retryable reports whether the same request may succeed later: the codes
// docs/api.md names retryable, and the gateway's own 429 and 5xx (no code),
// which started nothing or leave an allocation the gameInstanceId recovers.
func (e *Error) Retryable() bool {
	switch e.Code {
	case CodeAllocationInProgress, CodeNoCapacity, CodeRateLimited, CodeUpstreamTimeout, CodeServiceUnavailable:
		return true
	case "":
		return e.Status == http.StatusTooManyRequests || e.Status >= 500
	}
	return false
}

// IsCode reports whether err is (or wraps) an *Error with that code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// errorBody is both error shapes: the service's {"error": {...}} and API
// Gateway's {"message": "..."}.
type errorBody struct {
	Error   *apishape.ErrorDetail `json:"error"`
	Message string                `json:"message"`
}

// maxMessage bounds a message taken from a body that is not the service's
// JSON (an HTML page from a proxy, say).
const maxMessage = 256

// errorOf reads a non-2xx answer about gameInstanceID (empty for regions).
func errorOf(status int, header http.Header, body []byte, op, gameInstanceID string) *Error {
	e := &Error{Status: status, op: op, RetryAfter: gameinstance.ParseRetryAfter(header.Get("Retry-After"), time.Now())}
	var b errorBody
	switch {
	case json.Unmarshal(body, &b) == nil && b.Error != nil:
		e.Code, e.Message = string(b.Error.Code), b.Error.Message
		if len(b.Error.Attempts) > 0 || b.Error.State != "" {
			e.Allocation = &Allocation{GameInstanceID: gameInstanceID, State: b.Error.State, Attempts: b.Error.Attempts,
				Error: &Failure{Code: b.Error.Code, Message: b.Error.Message}}
		}
	case b.Message != "":
		e.Message = b.Message
	default:
		e.Message = printable(body, maxMessage)
	}
	return e
}

// printable is the start of body as one line of text.
func printable(body []byte, limit int) string {
	s := strings.ToValidUTF8(string(body[:min(len(body), limit)]), "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
