package gameinstance

import (
	"fmt"
	"regexp"
)

// MaxIDLength is the longest gameInstanceId.
const MaxIDLength = 128

var idPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// IDProblem says what is wrong with a gameInstanceId, "" when nothing is.
func IDProblem(id string) string {
	switch {
	case id == "":
		return "gameInstanceId is required"
	case len(id) > MaxIDLength:
		return fmt.Sprintf("gameInstanceId must be at most %d characters", MaxIDLength)
	case !idPattern.MatchString(id):
		return "gameInstanceId may only contain letters, digits and . _ : -"
	}
	return ""
}

// ValidateID checks an id taken from a path: INVALID_REQUEST when bad.
func ValidateID(id string) error {
	if IDProblem(id) != "" {
		return &Error{Code: CodeInvalidRequest,
			Message: fmt.Sprintf("gameInstanceId must be 1-%d characters of letters, digits and . _ : -", MaxIDLength)}
	}
	return nil
}
