package gameinstance

import (
	"errors"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// Code is a stable error code clients can switch on.
type Code = apishape.Code

// The public error codes. The HTTP layer maps them to statuses in one place.
const (
	CodeInvalidRequest       Code = "INVALID_REQUEST"
	CodeAllocationInProgress Code = "ALLOCATION_IN_PROGRESS"
	CodeIdempotencyMismatch  Code = "IDEMPOTENCY_MISMATCH"
	CodeNoCapacity           Code = "NO_CAPACITY"
	// CodeRateLimited: the Allocators' rate limits (429) kept this
	// allocation from the regions that might have had a server.
	CodeRateLimited      Code = "RATE_LIMITED"
	CodeUpstreamTimeout  Code = "UPSTREAM_TIMEOUT"
	CodeAllocationFailed Code = "ALLOCATION_FAILED"
	// CodeUpstreamInvalidResponse: an Agones allocator answered 2xx with
	// something that is not an allocation (no address or ports, ports out
	// of range, too large, not JSON). GameFabric's unusable answers stay
	// ALLOCATION_FAILED, as they always were.
	CodeUpstreamInvalidResponse Code = "UPSTREAM_INVALID_RESPONSE"
	CodeNotFound                Code = "NOT_FOUND"
	CodeUnauthorized            Code = "UNAUTHORIZED"
	CodeInvalidState            Code = "INVALID_STATE"
	CodeInternal                Code = "INTERNAL"
	// CodeUnavailable: a dependency (DynamoDB, Secrets Manager) failed for
	// now; the request left nothing half done and may be retried as is.
	CodeUnavailable Code = "SERVICE_UNAVAILABLE"
	// CodePlacementCancelled: a queued placement was cancelled (DELETE)
	// before it found a server.
	CodePlacementCancelled Code = "PLACEMENT_CANCELLED"
	// CodePlacementTimedOut: a queued placement found no server before
	// its queueTimeoutSeconds ran out.
	CodePlacementTimedOut Code = "PLACEMENT_TIMED_OUT"
	// CodeInvalidMatch: a FlexMatch match's event cannot be placed as it
	// is (its customEventData is not JSON, names an unknown field, or asks
	// for a version or region that is not valid).
	CodeInvalidMatch Code = "INVALID_MATCH"
	// CodeMatchTooLarge: a FlexMatch match has more players, or a bigger
	// event, than the service keeps (MaxMatchPlayers, MaxMatchDetailBytes).
	CodeMatchTooLarge Code = "MATCH_TOO_LARGE"
)

// Error is every error the domain returns to its callers.
type Error struct {
	Code    Code
	Message string
	// Attempts is set for upstream failures.
	Attempts []Attempt
	// RetryAfter is set when the caller should come back later.
	RetryAfter time.Duration
	// State is the instance's current state, for INVALID_STATE.
	State State
	// Err is the internal cause; it is logged, never shown to clients.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of err, INTERNAL for anything unclassified.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
