// Package gameliftapi serves GameLift's game session placement operations
// (StartGameSessionPlacement, DescribeGameSessionPlacement,
// StopGameSessionPlacement) in both protocols GameLift's service model
// lists, AWS JSON 1.1 and Smithy RPC v2 CBOR, behind SigV4 signatures it
// checks itself, on the allocate use case: a backend written against any
// AWS SDK keeps its code and changes its endpoint and keys.
package gameliftapi

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Request is an HTTP request as a Lambda function URL delivers it (payload
// format 2.0): what the client signed, unaltered. It is not a net/http
// request because the signature covers headers as they were sent, which
// the usual adapter splits on commas, and the host they were sent to.
type Request struct {
	Method string
	// Path and Query are the raw path and query string.
	Path, Query string
	// Header holds each header under its lower-case name, multiple values
	// joined by commas (as the event carries them); "host" included.
	Header map[string]string
	Body   []byte
}

// Response is the answer: always a body of the request's protocol.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
}

// MaxBodyBytes bounds what a request may carry: a StartGameSessionPlacement
// with its largest GameSessionData and its players fits.
const MaxBodyBytes = 256 << 10

// Handler is the API: protocol, signature, operation.
type Handler struct {
	Service  *Service
	Verifier Verifier
}

// operation is one of the API's, on the decoded body.
type operation func(ctx context.Context, h *Handler, body map[string]any, account string) (obj, error)

var operations = map[string]operation{
	"StartGameSessionPlacement": func(ctx context.Context, h *Handler, body map[string]any, account string) (obj, error) {
		in, err := ReadStart(body)
		if err != nil {
			return nil, err
		}
		return h.Service.Start(ctx, in, account)
	},
	"DescribeGameSessionPlacement": func(ctx context.Context, h *Handler, body map[string]any, _ string) (obj, error) {
		id, err := PlacementID(body)
		if err != nil {
			return nil, err
		}
		return h.Service.Describe(ctx, id)
	},
	"StopGameSessionPlacement": func(ctx context.Context, h *Handler, body map[string]any, _ string) (obj, error) {
		id, err := PlacementID(body)
		if err != nil {
			return nil, err
		}
		return h.Service.Stop(ctx, id)
	},
}

// Serve answers r; requestID goes in the answer's headers, account (the
// deployment's AWS account, "" if unknown) into the queues' ARNs.
func (h *Handler) Serve(ctx context.Context, r Request, requestID, account string) Response {
	log, began := logging.FromContext(ctx), time.Now()
	p, op, perr := route(r)
	if perr == nil && len(r.Body) > MaxBodyBytes {
		perr = invalid("the request body exceeds 256 KiB")
	}
	if perr == nil {
		perr = h.Verifier.Verify(ctx, r)
	}
	var out obj
	if perr == nil {
		body, err := decode(p, r.Body)
		switch run, ok := operations[op]; {
		case !ok:
			perr = &Error{Type: UnknownOperation, Message: "GameLift has no operation " + op + " here: this API serves StartGameSessionPlacement, DescribeGameSessionPlacement and StopGameSessionPlacement"}
		case err != nil:
			perr = invalid("the request body is not a structure of the request's protocol")
		default:
			out, perr = run(ctx, h, body, account)
		}
	}
	res := Response{Status: 200, Header: map[string]string{"x-amzn-RequestId": requestID}}
	if p == CBOR {
		res.Header["smithy-protocol"], res.Header["Content-Type"] = "rpc-v2-cbor", "application/cbor"
	} else {
		res.Header["Content-Type"] = "application/x-amz-json-1.1"
	}
	if perr != nil {
		e := fromDomain(perr)
		logError(log, op, e)
		res.Status, out = status(p, e.Type), obj{{"__type", e.Type}, {"Message", e.Message}, {"message", e.Message}}
	} else {
		out = obj{{"GameSessionPlacement", out}}
	}
	res.Body = encode(p, out)
	log.Info("request", "protocol", [...]string{"json1.1", "rpcv2cbor"}[p], "operation", op, "status", res.Status,
		"durationMs", time.Since(began).Milliseconds())
	return res
}

// route finds the protocol and the operation: RPC v2 CBOR by its path and
// smithy-protocol header, AWS JSON 1.1 by X-Amz-Target; anything else is
// answered as JSON 1.1 would be.
func route(r Request) (Protocol, string, error) {
	if rest, ok := strings.CutPrefix(r.Path, "/service/"); ok {
		service, op, _ := strings.Cut(rest, "/operation/")
		switch {
		case r.Header["smithy-protocol"] != "rpc-v2-cbor":
			return CBOR, op, invalid("an RPC v2 CBOR request needs the header smithy-protocol: rpc-v2-cbor")
		case r.Header["x-amz-target"] != "" || r.Header["x-amzn-target"] != "":
			return CBOR, op, invalid("an RPC v2 CBOR request must not carry X-Amz-Target")
		case r.Method != "POST" || service != "GameLift" || strings.Contains(op, "/"):
			return CBOR, op, &Error{Type: UnknownOperation, Message: "RPC v2 CBOR operations are POST /service/GameLift/operation/<Operation>"}
		case len(r.Body) > 0 && mediaType(r.Header["content-type"]) != "application/cbor":
			return CBOR, op, invalid("an RPC v2 CBOR request's Content-Type must be application/cbor")
		}
		return CBOR, op, nil
	}
	target := r.Header["x-amz-target"]
	op, ok := strings.CutPrefix(target, "GameLift.")
	switch {
	case target == "":
		return JSON11, "", &Error{Type: UnknownOperation, Message: "no operation: send AWS JSON 1.1 (X-Amz-Target: GameLift.<Operation>) or RPC v2 CBOR"}
	case !ok || r.Method != "POST":
		return JSON11, op, &Error{Type: UnknownOperation, Message: "AWS JSON 1.1 operations are POST with X-Amz-Target: GameLift.<Operation>"}
	case !strings.HasPrefix(mediaType(r.Header["content-type"]), "application/x-amz-json-1"):
		return JSON11, op, invalid("an AWS JSON 1.1 request's Content-Type must be application/x-amz-json-1.1")
	}
	return JSON11, op, nil
}

func mediaType(contentType string) string {
	m, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(m))
}

// logError logs an answered error: a fault at ERROR with its cause, a
// client's mistake at INFO, never anything of the request's credentials.
func logError(log *slog.Logger, op string, e *Error) {
	if e.Type == InternalService {
		log.Error("GameLift operation failed", "operation", op, "type", e.Type, "message", e.Message, "error", e.Err)
		return
	}
	log.Info("GameLift operation refused", "operation", op, "type", e.Type, "message", e.Message, "error", e.Err)
}
