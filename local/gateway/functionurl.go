package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/internal/uuid"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// maxURLBody is a function URL's request limit: Lambda's 6 MB payload of
// a synchronous invocation (an HTTP API's is 10 MB).
const maxURLBody = 6 << 20

// ReservedInvoker runs an invocation that Lambda throttles at the
// function's reserved concurrency, as it does a function URL's (Pool).
type ReservedInvoker interface {
	InvokeReserved(ctx context.Context, event []byte, timeout time.Duration, reserved int) (runtimeapi.Result, error)
}

// FunctionURL is one function URL as the local stack serves it.
type FunctionURL struct {
	Function string // the function's logical ID, for the log
	// ID is the URL's id: the event's apiId and domainPrefix, and the first
	// label of its domainName, <ID>.lambda-url.<Region>.on.aws (see URLID).
	ID     string
	Region string
	// Timeout is the function's Timeout, the only limit on how long the
	// URL waits: unlike an HTTP API it has no 30 s of its own.
	Timeout time.Duration
	// Reserved is the function's ReservedConcurrentExecutions, 0 if none:
	// past it Lambda refuses the call 429, running nothing.
	Reserved int
}

// URLID is a stable url-id for the URL with logicalID, in the form of
// Lambda's (32 lower-case letters and digits), so logs and events name the
// same URL run after run.
func URLID(logicalID string) string {
	sum := sha256.Sum256([]byte(logicalID))
	return hex.EncodeToString(sum[:16])
}

// NewFunctionURL serves every path and method through inv, as Lambda
// serves a function URL with AuthType NONE and InvokeMode BUFFERED; its
// answers are the function's payload-2.0 responses, as an HTTP API's.
func NewFunctionURL(u FunctionURL, inv ReservedInvoker, log *slog.Logger) http.Handler {
	invoke := func(ctx context.Context, event []byte, timeout time.Duration) (runtimeapi.Result, error) {
		return inv.InvokeReserved(ctx, event, timeout, u.Reserved)
	}
	return &front{function: u.Function, maxBody: maxURLBody, timeout: u.Timeout, invoke: invoke, log: log,
		event: u.event}
}

// urlEvent is a function URL's request event: payload format 2.0 as
// Lambda delivers it, which neither events.APIGatewayV2HTTPRequest (its
// authentication is never null) nor events.LambdaFunctionURLRequest (no
// routeKey, no stage) marshals exactly. It has no pathParameters and no
// stageVariables.
type urlEvent struct {
	Version               string            `json:"version"`
	RouteKey              string            `json:"routeKey"`
	RawPath               string            `json:"rawPath"`
	RawQueryString        string            `json:"rawQueryString"`
	Cookies               []string          `json:"cookies,omitempty"`
	Headers               map[string]string `json:"headers"`
	QueryStringParameters map[string]string `json:"queryStringParameters,omitempty"`
	RequestContext        urlContext        `json:"requestContext"`
	Body                  string            `json:"body,omitempty"`
	IsBase64Encoded       bool              `json:"isBase64Encoded"`
}

type urlContext struct {
	// AccountID is "anonymous": with AuthType NONE no caller is known.
	AccountID      string                                               `json:"accountId"`
	APIID          string                                               `json:"apiId"`
	Authentication *struct{}                                            `json:"authentication"`
	DomainName     string                                               `json:"domainName"`
	DomainPrefix   string                                               `json:"domainPrefix"`
	HTTP           events.APIGatewayV2HTTPRequestContextHTTPDescription `json:"http"`
	RequestID      string                                               `json:"requestId"`
	RouteKey       string                                               `json:"routeKey"`
	Stage          string                                               `json:"stage"`
	Time           string                                               `json:"time"`
	TimeEpoch      int64                                                `json:"timeEpoch"`
}

// event builds the event Lambda would send for r: the request's headers
// with those Lambda's front end adds, and a body that is base64 unless its
// Content-Type is text.
func (u FunctionURL) event(r *http.Request, body []byte) any {
	q := readRequest(r)
	q.headers["host"] = r.Host
	q.headers["x-forwarded-for"] = q.sourceIP
	if prior := r.Header.Get("X-Forwarded-For"); prior != "" {
		q.headers["x-forwarded-for"] = prior + ", " + q.sourceIP
	}
	q.headers["x-forwarded-proto"] = "http" // locally there is no TLS
	if _, port, err := net.SplitHostPort(r.Host); err == nil {
		q.headers["x-forwarded-port"] = port
	}
	q.headers["x-amzn-trace-id"] = traceID(q.now)
	ev := urlEvent{Version: "2.0", RouteKey: "$default", RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
		Cookies: q.cookies, Headers: q.headers, QueryStringParameters: q.query,
		RequestContext: urlContext{AccountID: "anonymous", APIID: u.ID, DomainPrefix: u.ID,
			DomainName: u.ID + ".lambda-url." + u.Region + ".on.aws", HTTP: q.http, RequestID: uuid.New(),
			RouteKey: "$default", Stage: "$default", Time: q.requestTime(), TimeEpoch: q.now.UnixMilli()},
	}
	ev.Body, ev.IsBase64Encoded = encodeBody(body, isText(r.Header.Get("Content-Type")))
	return ev
}

// isText reports whether a function URL passes a body of this Content-Type
// as it is: application/json and text/*, the types AWS names; Lambda
// base64-encodes every other body, one without a Content-Type too.
func isText(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && (media == "application/json" || strings.HasPrefix(media, "text/"))
}

// traceID is an X-Ray trace header as Lambda's front end adds it.
func traceID(now time.Time) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return fmt.Sprintf("Root=1-%08x-%x", now.Unix(), b)
}
