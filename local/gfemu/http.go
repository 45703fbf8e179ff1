package gfemu

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
)

// maxBodyBytes bounds every body the emulator reads; real ones are a few
// hundred bytes.
const maxBodyBytes = 1 << 20

// tokens is a service's list of valid bearer tokens. During a rotation it
// holds several, and any of them is accepted; an empty list admits nobody,
// so a misconfigured emulator fails loudly instead of running open.
type tokens struct{ list atomic.Pointer[[]string] }

func newTokens(list ...string) *tokens {
	ts := &tokens{}
	ts.set(list...)
	return ts
}

// set replaces the list (a rotation), dropping empty entries: an empty
// token never authenticates.
func (ts *tokens) set(list ...string) {
	list = slices.DeleteFunc(slices.Clone(list), func(t string) bool { return t == "" })
	ts.list.Store(&list)
}

// accepts reports whether token is one of ts, in constant time.
func (ts *tokens) accepts(token string) bool {
	match := 0
	for _, t := range *ts.list.Load() {
		match |= subtle.ConstantTimeCompare([]byte(token), []byte(t))
	}
	return match == 1
}

// bearerToken reads "Authorization: Bearer <token>" (the scheme in any
// case); ok is false when the header is missing, has another scheme or no
// token.
func bearerToken(r *http.Request) (token string, ok bool) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	return token, strings.EqualFold(scheme, "Bearer") && token != ""
}

// authorize returns the request's bearer token and whether ts accepts it,
// answering 401 with WWW-Authenticate: Bearer itself when not. what names
// the token kind ("registry", "allocator", "ping"), which makes a token
// mix-up in the local stack obvious from the error alone.
func authorize(w http.ResponseWriter, r *http.Request, ts *tokens, what string) (string, bool) {
	token, ok := bearerToken(r)
	if ok && ts.accepts(token) {
		return token, true
	}
	w.Header().Set("WWW-Authenticate", "Bearer")
	if ok {
		writeError(w, http.StatusUnauthorized, "invalid "+what+" token")
	} else {
		writeError(w, http.StatusUnauthorized, "missing bearer token (expected Authorization: Bearer <"+what+" token>)")
	}
	return token, false
}

// writeJSON answers status with v (the emulator's own types: it cannot
// fail to encode) as JSON and a trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeError answers status with {"error": msg}, every failure's body.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// errorJSON is the body writeError sends, for an answer written in part.
func errorJSON(msg string) []byte {
	body, _ := json.Marshal(map[string]string{"error": msg})
	return append(body, '\n')
}

// decodeJSON reads exactly one JSON value of at most maxBodyBytes into v,
// rejecting unknown fields so a misspelled field fails loudly instead of
// silently taking its default. An empty body is allowed only when
// allowEmpty (v keeps its zero value). The error reads well as a 400's text.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fmt.Errorf("request body exceeds %d bytes", maxBodyBytes)
		}
		return fmt.Errorf("read request body: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		if allowEmpty {
			return nil
		}
		return errors.New("request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("invalid JSON body: data after the JSON object")
	}
	return nil
}

// jsonErrors lets mux route, but turns its plain-text 404 and 405 answers
// (the latter with Allow) into the JSON errors every GameFabric client
// expects.
func jsonErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder() // the mux's own plain-text answer, rewritten
		mux.ServeHTTP(rec, r)
		if rec.Code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.Header().Get("Allow"))
			writeError(w, rec.Code, "method "+r.Method+" not allowed for "+r.URL.Path)
			return
		}
		writeError(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
	})
}
