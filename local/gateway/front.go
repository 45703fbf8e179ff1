package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// front is what the HTTP API and a function URL do alike once a request
// has found its function: read the body within the front end's limit, turn
// the request into the function's event, invoke it, and answer with the
// function's payload-2.0 response or the front end's own error.
type front struct {
	function string
	maxBody  int64
	// wait is how long the front end waits for the function's answer (the
	// HTTP API's integration timeout); 0 waits as long as it runs.
	wait    time.Duration
	timeout time.Duration // the function's own Timeout
	invoke  func(ctx context.Context, event []byte, timeout time.Duration) (runtimeapi.Result, error)
	log     *slog.Logger
	event   func(r *http.Request, body []byte) any // the function's event of r
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, f.maxBody+1))
	if err != nil || int64(len(body)) > f.maxBody {
		writeMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	payload, err := json.Marshal(f.event(r, body))
	if err != nil {
		writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	ctx, cancel := r.Context(), context.CancelFunc(func() {})
	if f.wait > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.wait)
	}
	defer cancel()
	start := time.Now()
	res, err := f.invoke(ctx, payload, f.timeout)
	f.log.Info("invoke", "function", f.function, "method", r.Method, "path", r.URL.Path,
		"durationMs", time.Since(start).Milliseconds(), "error", errString(err, res))
	// A failed invocation is answered with a message alone, alike by both
	// front ends: for a function URL AWS documents the throttle's status
	// (429), not what the rest look like, so it answers as the HTTP API.
	switch {
	case f.wait > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded):
		f.log.Warn("integration timeout: the function did not answer within the gateway's limit",
			"function", f.function, "limit", f.wait)
		writeMessage(w, http.StatusServiceUnavailable, "Service Unavailable")
	case errors.Is(err, ErrThrottled):
		writeMessage(w, http.StatusTooManyRequests, "Rate Exceeded.")
	case errors.Is(err, runtimeapi.ErrTimeout):
		writeMessage(w, http.StatusServiceUnavailable, "Service Unavailable")
	case err != nil || res.FunctionError != nil:
		writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
	default:
		writeResponse(w, res.Payload)
	}
}

func errString(err error, res runtimeapi.Result) string {
	if err != nil {
		return err.Error()
	}
	if res.FunctionError != nil {
		return res.FunctionError.Error()
	}
	return ""
}

// newEvent is what every payload-2.0 event carries of r as it arrived:
// headers lower-cased and joined with commas (cookies apart), query
// parameters joined the same way, who sent it and when, and the body, as
// it is when text, else base64.
func newEvent(r *http.Request, body []byte, text bool, routeKey string) events.APIGatewayV2HTTPRequest {
	ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: routeKey, RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
		Headers: map[string]string{}, Body: string(body)}
	for k, v := range r.Header {
		ev.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	delete(ev.Headers, "cookie")
	for _, c := range r.Cookies() {
		ev.Cookies = append(ev.Cookies, c.String())
	}
	for k, v := range r.URL.Query() {
		if ev.QueryStringParameters == nil {
			ev.QueryStringParameters = map[string]string{}
		}
		ev.QueryStringParameters[k] = strings.Join(v, ",")
	}
	if len(body) > 0 && !text {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	now := time.Now().UTC()
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	ev.RequestContext = events.APIGatewayV2HTTPRequestContext{RouteKey: routeKey, Stage: "$default",
		Time: now.Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
		HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP, UserAgent: r.UserAgent()}}
	return ev
}

// writeResponse writes a payload-2.0 response; a payload without a
// statusCode is, as with API Gateway and function URLs, a 200 JSON body.
func writeResponse(w http.ResponseWriter, payload []byte) {
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &resp); err != nil || resp.StatusCode == 0 {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(payload)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		decoded, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			writeMessage(w, http.StatusBadGateway, "Bad Gateway")
			return
		}
		body = decoded
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

func writeMessage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, "{\"message\":%q}\n", msg)
}
