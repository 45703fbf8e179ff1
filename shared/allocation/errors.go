package allocation

import (
	"errors"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func invalid(format string, args ...any) *gameinstance.Error {
	return &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

func internal(message string, err error) *gameinstance.Error {
	return &gameinstance.Error{Code: gameinstance.CodeInternal, Message: message, Err: err}
}

// unavailable is a dependency failure worth retrying after a moment.
func unavailable(message string, err error) *gameinstance.Error {
	return &gameinstance.Error{Code: gameinstance.CodeUnavailable, Message: message, RetryAfter: time.Second, Err: err}
}

// permanent is how a port marks an error that retrying cannot cure (a
// missing or malformed secret): it is a deployment problem, not an outage.
type permanent interface{ Permanent() bool }

// isPermanent reports whether err says retrying cannot help.
func isPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p) && p.Permanent()
}
