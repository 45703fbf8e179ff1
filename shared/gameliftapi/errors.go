package gameliftapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Error is an answer in GameLift's error shape: its __type, HTTP status
// and Message. Err, the internal cause, is logged, never answered.
type Error struct {
	Type    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Type + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Type + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// The errors GameLift's model lists for the placement operations, and the
// protocols' own for an operation they do not have.
const (
	InvalidRequest   = "InvalidRequestException"
	NotFound         = "NotFoundException"
	Unauthorized     = "UnauthorizedException"
	InternalService  = "InternalServiceException"
	Throttling       = "ThrottlingException"
	UnknownOperation = "UnknownOperationException"
)

// statuses is the one map of error type to HTTP status: GameLift answers
// its client errors 400 and its faults 500; the RPC v2 CBOR protocol
// answers an unknown operation 404.
var statuses = map[string]int{
	InvalidRequest: http.StatusBadRequest, NotFound: http.StatusBadRequest, Unauthorized: http.StatusBadRequest,
	Throttling: http.StatusBadRequest, InternalService: http.StatusInternalServerError, UnknownOperation: http.StatusNotFound,
}

func status(p Protocol, typ string) int {
	if typ == UnknownOperation && p == JSON11 {
		return http.StatusBadRequest // AWS JSON answers an unknown X-Amz-Target 400
	}
	if s, ok := statuses[typ]; ok {
		return s
	}
	return http.StatusInternalServerError
}

func invalid(msg string) *Error { return &Error{Type: InvalidRequest, Message: msg} }

func invalidIf(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return invalid(strings.Join(problems, "; "))
}

// fromDomain is a domain error (*gameinstance.Error, or anything else) as
// the GameLift error a client can act on.
func fromDomain(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var d *gameinstance.Error
	if !errors.As(err, &d) {
		return &Error{Type: InternalService, Message: "the service failed; retry", Err: err}
	}
	switch d.Code {
	case gameinstance.CodeInvalidRequest:
		return &Error{Type: InvalidRequest, Message: d.Message}
	case gameinstance.CodeIdempotencyMismatch:
		return &Error{Type: InvalidRequest, Message: "this PlacementId was started with other inputs; a PlacementId cannot be reused"}
	case gameinstance.CodeNotFound:
		return &Error{Type: NotFound, Message: d.Message}
	case gameinstance.CodeAllocationInProgress:
		return &Error{Type: Throttling, Message: "the placement is busy; retry", Err: err}
	}
	return &Error{Type: InternalService, Message: "the service is unavailable for now; retry", Err: err}
}
