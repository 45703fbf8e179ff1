package gfemu

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxBodyBytes bounds every request body; real bodies are a few hundred bytes.
const maxBodyBytes = 1 << 20

type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"encode response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

// decodeBody reads exactly one JSON value into v, rejecting unknown fields so
// a misspelled field fails loudly instead of silently taking its default.
// An empty body is allowed only when allowEmpty (v keeps its zero value).
func decodeBody(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
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

// authorized reports whether the request carries "Bearer <t>" for one of
// tokens, answering 401 itself when not. what names the token kind, which
// makes a token mix-up in the local stack obvious from the error alone.
func authorized(w http.ResponseWriter, r *http.Request, tokens []string, what string) bool {
	scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	got = strings.TrimSpace(got)
	if strings.EqualFold(scheme, "Bearer") && got != "" {
		match := 0
		for _, t := range tokens {
			match |= subtle.ConstantTimeCompare([]byte(got), []byte(t))
		}
		if match == 1 {
			return true
		}
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeError(w, http.StatusUnauthorized, "invalid "+what+" token")
		return false
	}
	w.Header().Set("WWW-Authenticate", "Bearer")
	writeError(w, http.StatusUnauthorized, "missing bearer token (expected Authorization: Bearer <"+what+" token>)")
	return false
}
