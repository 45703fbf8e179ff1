package gfproto

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Tokens is a service's list of valid bearer tokens. During a rotation it
// holds several, and any of them is accepted; an empty list admits nobody,
// so a misconfigured stand-in fails loudly instead of running open.
type Tokens []string

// NewTokens drops empty entries: an empty token never authenticates.
func NewTokens(tokens ...string) Tokens {
	var out Tokens
	for _, t := range tokens {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Accepts reports whether token is one of ts, in constant time.
func (ts Tokens) Accepts(token string) bool {
	if token == "" {
		return false
	}
	match := 0
	for _, t := range ts {
		match |= subtle.ConstantTimeCompare([]byte(token), []byte(t))
	}
	return match == 1
}

// BearerToken reads "Authorization: Bearer <token>" (the scheme in any
// case); ok is false when the header is missing, has another scheme or no
// token.
func BearerToken(r *http.Request) (token string, ok bool) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	return token, strings.EqualFold(scheme, "Bearer") && token != ""
}

// Authorize reports whether the request carries a bearer token ts accepts,
// answering 401 with WWW-Authenticate: Bearer itself when not. what names
// the token kind ("registry", "allocator", "ping"), which makes a token
// mix-up in the local stack obvious from the error alone.
func Authorize(w http.ResponseWriter, r *http.Request, ts Tokens, what string) bool {
	token, ok := BearerToken(r)
	if ok && ts.Accepts(token) {
		return true
	}
	w.Header().Set("WWW-Authenticate", "Bearer")
	if ok {
		WriteError(w, http.StatusUnauthorized, "invalid "+what+" token")
	} else {
		WriteError(w, http.StatusUnauthorized, "missing bearer token (expected Authorization: Bearer <"+what+" token>)")
	}
	return false
}
