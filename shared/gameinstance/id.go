package gameinstance

import "fmt"

// MaxIDLength is the longest gameInstanceId.
const MaxIDLength = 128

// idChars reports whether id is made of letters, digits and . _ : - only,
// what the pattern ^[A-Za-z0-9._:-]+$ matches. A loop, not a package-level
// regexp: compiling one at start-up runs on every cold start of every
// function, before the first event.
func idChars(id string) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return false
		}
	}
	return id != ""
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// IDProblem says what is wrong with a gameInstanceId, "" when nothing is.
func IDProblem(id string) string {
	switch {
	case id == "":
		return "gameInstanceId is required"
	case len(id) > MaxIDLength:
		return fmt.Sprintf("gameInstanceId must be at most %d characters", MaxIDLength)
	case !idChars(id):
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
