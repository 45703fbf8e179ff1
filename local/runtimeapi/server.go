package runtimeapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Header and trailer names from the Runtime API (2018-06-01), as read and
// written by aws-lambda-go's runtime_api_client.go.
const (
	headerErrorType   = "Lambda-Runtime-Function-Error-Type"
	runtimePrefix     = "/2018-06-01/runtime"
	maxResponseBytes  = 6 << 20 // Lambda's synchronous response limit.
	maxErrorBodyBytes = 1 << 20
	errTypeTooLarge   = "Function.ResponseSizeTooLarge"
)

func (rt *Runtime) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+runtimePrefix+"/invocation/next", rt.handleNext)
	mux.HandleFunc("POST "+runtimePrefix+"/invocation/{id}/response", rt.handleResponse)
	mux.HandleFunc("POST "+runtimePrefix+"/invocation/{id}/error", rt.handleError)
	mux.HandleFunc("POST "+runtimePrefix+"/init/error", rt.handleInitError)
	return mux
}

// handleNext blocks until Invoke queues an event, like Lambda freezing the
// sandbox between invocations.
func (rt *Runtime) handleNext(w http.ResponseWriter, r *http.Request) {
	rt.markInitDone()
	var inv *invocation
	select {
	case inv = <-rt.pending:
	case <-r.Context().Done():
		return
	case <-rt.closing:
		// No answer at all: an empty one would make the runtime report an
		// error while it is being stopped. The connection closes with it.
		<-r.Context().Done()
		return
	}
	deadline := time.Now().Add(inv.timeout)
	rt.mu.Lock()
	rt.current = inv
	rt.mu.Unlock()

	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", functionARN(rt.cfg))
	h.Set("Lambda-Runtime-Trace-Id", inv.traceID)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(inv.event)
}

func (rt *Runtime) handleResponse(w http.ResponseWriter, r *http.Request) {
	inv := rt.claim(r.PathValue("id"))
	if inv == nil {
		writeAPIError(w, http.StatusBadRequest, "InvalidRequestID", "unknown or already completed request id "+r.PathValue("id"))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxResponseBytes+1))
	switch {
	case err != nil:
		inv.done <- outcome{err: fmt.Errorf("reading function response: %w", err)}
		writeAPIError(w, http.StatusBadRequest, "InvalidRequest", err.Error())
		return
	case len(body) > maxResponseBytes:
		fe := &FunctionError{Type: errTypeTooLarge, Message: fmt.Sprintf("response payload exceeds the %d byte limit", maxResponseBytes)}
		inv.done <- outcome{res: Result{Payload: mustJSON(fe), FunctionError: fe}}
		writeAPIError(w, http.StatusRequestEntityTooLarge, errTypeTooLarge, fe.Message)
		return
	}
	// A streamed response that failed midway carries the error in trailers,
	// which are only populated once the body has been read to EOF.
	if errType := r.Trailer.Get(headerErrorType); errType != "" {
		inv.done <- outcome{res: trailerError(errType, r.Trailer.Get("Lambda-Runtime-Function-Error-Body"))}
	} else {
		inv.done <- outcome{res: Result{Payload: body}}
	}
	writeAccepted(w)
}

func (rt *Runtime) handleError(w http.ResponseWriter, r *http.Request) {
	inv := rt.claim(r.PathValue("id"))
	if inv == nil {
		writeAPIError(w, http.StatusBadRequest, "InvalidRequestID", "unknown or already completed request id "+r.PathValue("id"))
		return
	}
	body, fe := readFunctionError(r)
	inv.done <- outcome{res: Result{Payload: body, FunctionError: fe}}
	writeAccepted(w)
}

func (rt *Runtime) handleInitError(w http.ResponseWriter, r *http.Request) {
	_, fe := readFunctionError(r)
	rt.recordInitError(fe)
	writeAccepted(w)
}

// claim removes and returns the invocation the function has, if its id is
// id, so each invocation is answered at most once. A runtime answers one
// before it asks for the next, so there is never more than one.
func (rt *Runtime) claim(id string) *invocation {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	inv := rt.current
	if inv == nil || inv.id != id {
		return nil
	}
	rt.current = nil
	return inv
}

// readFunctionError parses an error document; runtimes that send something
// else still get their text and the error-type header surfaced.
func readFunctionError(r *http.Request) ([]byte, *FunctionError) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxErrorBodyBytes))
	fe := &FunctionError{}
	if err := json.Unmarshal(body, fe); err != nil {
		fe = &FunctionError{Message: string(body)}
	}
	if fe.Type == "" {
		fe.Type = r.Header.Get(headerErrorType)
	}
	if fe.Type == "" {
		fe.Type = "Runtime.Unknown"
	}
	return body, fe
}

func trailerError(errType, encodedBody string) Result {
	fe := &FunctionError{Type: errType}
	body, err := base64.StdEncoding.DecodeString(encodedBody)
	if err != nil || json.Unmarshal(body, fe) != nil {
		fe = &FunctionError{Type: errType, Message: encodedBody}
		body = mustJSON(fe)
	}
	return Result{Payload: body, FunctionError: fe}
}

func writeAccepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"OK"}`)
}

func writeAPIError(w http.ResponseWriter, status int, errType, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mustJSON(&FunctionError{Type: errType, Message: msg}))
}

// mustJSON is fe's document: only strings and already-valid RawMessage,
// so marshalling cannot fail.
func mustJSON(fe *FunctionError) []byte {
	b, _ := json.Marshal(fe)
	return b
}
