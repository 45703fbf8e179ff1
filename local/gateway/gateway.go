// Package gateway is a local stand-in for API Gateway's HTTP API: it serves
// exactly the routes template.yaml declares, turns each request into a
// payload-2.0 event, invokes the function's real bootstrap through the
// Lambda Runtime API, and turns the response back into HTTP. Like API
// Gateway locally it does no IAM auth.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// Invoker runs one invocation of a function.
type Invoker interface {
	Invoke(ctx context.Context, event []byte, timeout time.Duration) (runtimeapi.Result, error)
}

// maxBody is API Gateway's payload limit.
const maxBody = 10 << 20

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// IntegrationTimeout is API Gateway's: an HTTP API waits at most 30 s for
// its integration, counting a cold start, and then answers a bare
// 503 {"message":"Service Unavailable"}, while the function runs on.
const IntegrationTimeout = 30 * time.Second

// Timeouts are a route's limits.
type Timeouts struct {
	Function    time.Duration // the function's configured Timeout
	Integration time.Duration // the gateway's; 0 = IntegrationTimeout
}

// New serves every route through invokers[route.FunctionLogicalID].
func New(routes []template.Route, invokers map[string]Invoker, timeouts Timeouts, log *slog.Logger) (http.Handler, error) {
	if timeouts.Integration <= 0 {
		timeouts.Integration = IntegrationTimeout
	}
	mux := http.NewServeMux()
	for _, rt := range routes {
		inv, ok := invokers[rt.FunctionLogicalID]
		if !ok {
			return nil, fmt.Errorf("route %s %s: no function %s", rt.Method, rt.Path, rt.FunctionLogicalID)
		}
		if rt.PayloadFormatVersion != "2.0" {
			return nil, fmt.Errorf("route %s %s: payload format %s is not supported locally", rt.Method, rt.Path, rt.PayloadFormatVersion)
		}
		pattern, params := muxPattern(rt)
		mux.Handle(pattern, &route{route: rt, params: params, invoke: inv, timeouts: timeouts, log: log})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeMessage(w, http.StatusNotFound, "Not Found")
	})
	return mux, nil
}

// muxPattern turns an API Gateway route into a ServeMux pattern: the
// {param} syntax is shared, {proxy+} becomes {proxy...}.
func muxPattern(rt template.Route) (string, []string) {
	path := rt.Path
	if path == "$default" {
		path = "/"
	}
	var params []string
	path = pathParam.ReplaceAllStringFunc(path, func(m string) string {
		name := strings.Trim(m, "{}")
		if greedy, ok := strings.CutSuffix(name, "+"); ok {
			params = append(params, greedy)
			return "{" + greedy + "...}"
		}
		params = append(params, name)
		return m
	})
	if rt.Method == "ANY" {
		return path, params
	}
	return rt.Method + " " + path, params
}

type route struct {
	route    template.Route
	params   []string
	invoke   Invoker
	timeouts Timeouts
	log      *slog.Logger
}

func (h *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		writeMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	event, err := json.Marshal(h.event(r, body))
	if err != nil {
		writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(r.Context(), h.timeouts.Integration)
	defer cancel()
	res, err := h.invoke.Invoke(ctx, event, h.timeouts.Function)
	h.log.Info("invoke", "function", h.route.FunctionLogicalID, "method", r.Method, "path", r.URL.Path,
		"durationMs", time.Since(start).Milliseconds(), "error", errString(err, res))
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		h.log.Warn("integration timeout: the function did not answer within the gateway's limit",
			"function", h.route.FunctionLogicalID, "limit", h.timeouts.Integration)
		writeMessage(w, http.StatusServiceUnavailable, "Service Unavailable")
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

// event builds the payload-2.0 event API Gateway would send.
func (h *route) event(r *http.Request, body []byte) events.APIGatewayV2HTTPRequest {
	now := time.Now().UTC()
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	delete(headers, "cookie")
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.String())
	}
	query := map[string]string{}
	for k, v := range r.URL.Query() {
		query[k] = strings.Join(v, ",")
	}
	var pathParams map[string]string
	for _, name := range h.params {
		if pathParams == nil {
			pathParams = map[string]string{}
		}
		pathParams[name] = r.PathValue(name)
	}
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	routeKey := h.route.Method + " " + h.route.Path
	if h.route.Path == "$default" {
		routeKey = "$default"
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
		Cookies: cookies, Headers: headers, PathParameters: pathParams,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: routeKey, AccountID: "000000000000", Stage: "$default", RequestID: requestID(),
			APIID: "local", DomainName: r.Host, DomainPrefix: strings.Split(r.Host, ".")[0],
			Time: now.Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP, UserAgent: r.UserAgent(),
			},
		},
	}
	if len(query) > 0 {
		ev.QueryStringParameters = query
	}
	if len(body) > 0 {
		if utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev
}

// writeResponse writes a payload-2.0 response; a payload without a
// statusCode is, as with API Gateway, a 200 JSON body.
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

func requestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
