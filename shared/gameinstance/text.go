package gameinstance

import (
	"regexp"
	"strings"
)

// Clip keeps at most n bytes of s as valid UTF-8: how every text from
// outside (an Allocator's answer, a game server's callback) is bounded
// before it is recorded. Invalid runs become "?", one byte, so the result
// never grows past the limit (the fuzzer found that U+FFFD, three bytes,
// could).
func Clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "?")
}

// b64token is RFC 6750's b64token: what an Authorization: Bearer header
// may carry.
var b64token = regexp.MustCompile(`^[A-Za-z0-9._~+/-]+=*$`)

// IsBearerToken reports whether s can travel as "Authorization: Bearer s".
func IsBearerToken(s string) bool { return b64token.MatchString(s) }
