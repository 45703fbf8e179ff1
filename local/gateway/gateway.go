// Package gateway is a local stand-in for API Gateway's HTTP API and for
// Lambda's function URLs: the HTTP API serves exactly the routes
// template.yaml declares, a function URL every path and method of its
// function; each turns a request into a payload-2.0 event, invokes the
// function's real bootstrap through the Lambda Runtime API, and turns the
// response back into HTTP. Like API Gateway locally the HTTP API does no
// IAM auth; function URLs are served with AuthType NONE only.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

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
		mux.Handle(pattern, &front{function: rt.FunctionLogicalID, maxBody: maxBody, wait: timeouts.Integration, timeout: timeouts.Function,
			invoke: inv.Invoke, log: log, event: func(r *http.Request, body []byte) any { return routeEvent(rt, params, r, body) }})
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

// routeEvent is the payload-2.0 event API Gateway would send for r on rt.
func routeEvent(rt template.Route, params []string, r *http.Request, body []byte) any {
	routeKey := rt.Method + " " + rt.Path
	if rt.Path == "$default" {
		routeKey = "$default"
	}
	ev := newEvent(r, body, utf8.Valid(body), routeKey)
	for _, name := range params {
		if ev.PathParameters == nil {
			ev.PathParameters = map[string]string{}
		}
		ev.PathParameters[name] = r.PathValue(name)
	}
	c := &ev.RequestContext
	c.AccountID, c.RequestID, c.APIID, c.DomainName, c.DomainPrefix = "000000000000", requestID(), "local", r.Host, strings.Split(r.Host, ".")[0]
	return ev
}

func requestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
