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

// urlEvent is a function URL's request event: an HTTP API's payload 2.0
// (without pathParameters and stageVariables) but for its authentication,
// null, as Lambda delivers it.
type urlEvent struct {
	events.APIGatewayV2HTTPRequest
	RequestContext struct {
		events.APIGatewayV2HTTPRequestContext
		Authentication *struct{} `json:"authentication"`
	} `json:"requestContext"`
}

// event builds the event Lambda would send for r: the request's headers
// with those Lambda's front end adds, and a body that is base64 unless its
// Content-Type is text.
func (u FunctionURL) event(r *http.Request, body []byte) any {
	ev := urlEvent{APIGatewayV2HTTPRequest: newEvent(r, body, isText(r.Header.Get("Content-Type")), "$default")}
	c, h := ev.APIGatewayV2HTTPRequest.RequestContext, ev.Headers
	h["host"] = r.Host
	h["x-forwarded-for"] = c.HTTP.SourceIP
	if prior := r.Header.Get("X-Forwarded-For"); prior != "" {
		h["x-forwarded-for"] = prior + ", " + c.HTTP.SourceIP
	}
	h["x-forwarded-proto"] = "http" // locally there is no TLS
	if _, port, err := net.SplitHostPort(r.Host); err == nil {
		h["x-forwarded-port"] = port
	}
	h["x-amzn-trace-id"] = traceID(time.UnixMilli(c.TimeEpoch))
	// AccountID is "anonymous": with AuthType NONE no caller is known.
	c.AccountID, c.APIID, c.DomainPrefix, c.RequestID = "anonymous", u.ID, u.ID, uuid.New()
	c.DomainName = u.ID + ".lambda-url." + u.Region + ".on.aws"
	ev.RequestContext.APIGatewayV2HTTPRequestContext = c
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
