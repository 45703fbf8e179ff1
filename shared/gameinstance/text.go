package gameinstance

import "strings"

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

// IsBearerToken reports whether s can travel as "Authorization: Bearer s":
// whether it is RFC 6750's b64token, ^[A-Za-z0-9._~+/-]+=*$ (checked by a
// loop rather than a regexp compiled at every cold start).
func IsBearerToken(s string) bool {
	body := strings.TrimRight(s, "=")
	for i := 0; i < len(body); i++ {
		if c := body[i]; !isAlnum(c) && !strings.ContainsRune("._~+/-", rune(c)) {
			return false
		}
	}
	return body != ""
}
