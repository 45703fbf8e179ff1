package gfproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxBodyBytes bounds every body a stand-in reads; real ones are a few
// hundred bytes.
const MaxBodyBytes = 1 << 20

// WriteJSON answers status with v as JSON and a trailing newline.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"encode response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// WriteError answers status with {"error": msg}.
func WriteError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, ErrorBody{Error: msg})
}

// ErrorJSON is the body WriteError sends, for a caller that writes it
// itself (in part, say).
func ErrorJSON(msg string) []byte {
	body, _ := json.Marshal(ErrorBody{Error: msg}) // a string field cannot fail
	return append(body, '\n')
}

// WriteRateLimited answers 429 with Retry-After: retryAfter (seconds).
func WriteRateLimited(w http.ResponseWriter, retryAfter string) {
	w.Header().Set("Retry-After", retryAfter)
	WriteError(w, http.StatusTooManyRequests, "rate limit exceeded")
}

// DecodeJSON reads exactly one JSON value of at most MaxBodyBytes into v,
// rejecting unknown fields so a misspelled field fails loudly instead of
// silently taking its default. An empty body is allowed only when
// allowEmpty (v keeps its zero value). The error reads well as a 400's text.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fmt.Errorf("request body exceeds %d bytes", MaxBodyBytes)
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

// JSONErrors lets mux route, but turns its plain-text 404 and 405 answers
// (the latter with Allow) into the JSON errors every GameFabric client
// expects.
func JSONErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{header: http.Header{}, status: http.StatusOK}
		mux.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			WriteError(w, rec.status, "method "+r.Method+" not allowed for "+r.URL.Path)
			return
		}
		WriteError(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
	})
}

// statusRecorder captures the mux's own error answer so it can be rewritten.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(status int)      { r.status = status }
