//go:build integration

package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// maxBody bounds what the middleware buffers of one request or response:
// above API Gateway's 10 MB payload limit and Lambda's 6 MB response limit,
// so nothing the API can really exchange goes unchecked.
const maxBody = 16 << 20

// Violation is an exchange that does not match the document.
type Violation struct {
	Method, Path string
	// Operation is the operationId the request matched, "" when none did.
	Operation string
	Status    int
	Problems  []string
}

func (v *Violation) Error() string {
	op := v.Operation
	if op == "" {
		op = "no operation"
	}
	return fmt.Sprintf("%s %s (%s) answered %d does not match %s:\n  %s",
		v.Method, v.Path, op, v.Status, DocumentPath, strings.Join(v.Problems, "\n  "))
}

// Middleware serves next and validates each request and its response
// against the document, calling report with a *Violation for every exchange
// that does not match; report may be called from several goroutines at once.
// The rules:
//   - The response must be one the document lists for the operation: its
//     status, its headers and its body.
//   - A request the document rejects (a bad body, parameter or credential)
//     must be answered 4xx: the service refused it too. Answered otherwise,
//     it is a violation: the service accepts what the contract forbids.
//   - A method and path the document does not have must get 404 (the
//     service's NOT_FOUND or API Gateway's {"message"}) or 405
//     METHOD_NOT_ALLOWED.
//
// Exchanges that pass are counted (Counts).
func (d *Document) Middleware(next http.Handler, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, complete := readBounded(r.Body)
		if complete {
			r.Body = io.NopCloser(bytes.NewReader(body))
		} else {
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		}
		// The clone outlives nothing, but the validator may read the
		// context after next has returned: keep it from being cancelled.
		seen := r.Clone(context.WithoutCancel(r.Context()))
		seen.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		rec.finish()
		v := d.check(seen, complete, rec)
		if len(v.Problems) > 0 {
			report(v)
			return
		}
		d.count(Exchange{Operation: v.Operation, Status: rec.status})
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

func readBounded(body io.ReadCloser) ([]byte, bool) {
	if body == nil || body == http.NoBody {
		return nil, true
	}
	b, err := io.ReadAll(io.LimitReader(body, maxBody+1))
	return b, err == nil && len(b) <= maxBody
}

// check validates one exchange; the Violation has no Problems when it matches.
func (d *Document) check(req *http.Request, requestComplete bool, rec *recorder) *Violation {
	v := &Violation{Method: req.Method, Path: req.URL.Path, Status: rec.status}
	if rec.overflow {
		v.Problems = append(v.Problems, fmt.Sprintf("the response body exceeds %d bytes and was not validated", maxBody))
		return v
	}
	resp := &http.Response{StatusCode: rec.status, Header: rec.header, Request: req,
		Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), ContentLength: int64(rec.body.Len())}
	op, ok := d.match(req.Method, req.URL.Path)
	if !ok {
		v.Problems = d.checkUnrouted(rec)
	} else {
		v.Operation = op.ID
		if requestComplete {
			if valid, errs := d.validator.ValidateHttpRequestSync(req); !valid && (rec.status < 400 || rec.status >= 500) {
				v.Problems = append(v.Problems, fmt.Sprintf("the request does not match the document, yet it was answered %d, not 4xx: %s",
					rec.status, describe(errs)))
			}
		}
		if valid, errs := d.validator.ValidateHttpResponse(req, resp); !valid {
			v.Problems = append(v.Problems, "response: "+describe(errs))
		}
	}
	if len(v.Problems) > 0 {
		v.Problems = append(v.Problems, "body: "+clip(rec.body.String(), 2048))
	}
	return v
}

// checkUnrouted: the document has no such operation, so the only right
// answers are the not-found and method-not-allowed errors.
func (d *Document) checkUnrouted(rec *recorder) []string {
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	raw := rec.body.Bytes()
	_ = json.Unmarshal(raw, &doc)
	want := map[int]string{http.StatusNotFound: "NOT_FOUND", http.StatusMethodNotAllowed: "METHOD_NOT_ALLOWED"}[rec.status]
	switch {
	case want == "":
		return []string{fmt.Sprintf("the document has no such operation, so the answer must be 404 or 405, not %d", rec.status)}
	case doc.Error.Code != "" && doc.Error.Code != want:
		return []string{fmt.Sprintf("a %d for an operation the document lacks must carry code %s, not %s", rec.status, want, doc.Error.Code)}
	case doc.Error.Code == "" && rec.status == http.StatusMethodNotAllowed:
		return []string{"a 405 must carry code METHOD_NOT_ALLOWED"}
	}
	schema := d.gatewayMessage
	if doc.Error.Code != "" {
		schema = d.errorResponse
	}
	if ok, errs := d.validateBody(schema, raw); !ok {
		return []string{"response: " + describe(errs)}
	}
	return nil
}

func (d *Document) validateBody(schema *base.Schema, raw []byte) (bool, []*liberrors.ValidationError) {
	return d.schemas.ValidateSchemaBytesWithVersion(schema, raw, d.version)
}

// describe renders the validator's errors, each with its schema failures.
func describe(errs []*liberrors.ValidationError) string {
	var parts []string
	for _, e := range errs {
		s := e.Message
		if e.Reason != "" && e.Reason != e.Message {
			s += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			s += fmt.Sprintf(" [%s at %s, schema %s]", f.Reason, orRoot(f.FieldPath), f.KeywordLocation)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func orRoot(p string) string {
	if p == "" {
		return "$"
	}
	return p
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// recorder passes the response through and keeps a copy: the status, the
// headers as they were sent and up to maxBody of the body.
type recorder struct {
	http.ResponseWriter
	status   int
	header   http.Header
	body     bytes.Buffer
	overflow bool
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status, r.header = status, r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if room := maxBody - r.body.Len(); len(b) > room {
		r.body.Write(b[:max(room, 0)])
		r.overflow = true
	} else {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// Flush keeps streaming handlers streaming.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// finish covers a handler that wrote nothing: net/http answers 200.
func (r *recorder) finish() {
	if r.status == 0 {
		r.status, r.header = http.StatusOK, r.ResponseWriter.Header().Clone()
	}
}
