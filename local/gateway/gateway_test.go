package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// echo answers with the event it got, as a payload-2.0 response.
type echo struct {
	got    events.APIGatewayV2HTTPRequest
	answer func(ev events.APIGatewayV2HTTPRequest) (runtimeapi.Result, error)
}

func (e *echo) Invoke(ctx context.Context, event []byte, _ time.Duration) (runtimeapi.Result, error) {
	if err := json.Unmarshal(event, &e.got); err != nil {
		return runtimeapi.Result{}, err
	}
	if e.answer == nil { // a function that takes longer than the gateway waits
		<-ctx.Done()
		return runtimeapi.Result{}, ctx.Err()
	}
	return e.answer(e.got)
}

func TestGateway(t *testing.T) {
	fn := &echo{}
	routes := []template.Route{
		{FunctionLogicalID: "Fn", Method: "POST", Path: "/v1/things", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "Fn", Method: "GET", Path: "/v1/things/{id}", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "Fn", Method: "ANY", Path: "/files/{path+}", PayloadFormatVersion: "2.0"},
	}
	h, err := New(routes, map[string]Invoker{"Fn": fn}, Timeouts{Function: time.Second, Integration: 200 * time.Millisecond}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ok := func(ev events.APIGatewayV2HTTPRequest) (runtimeapi.Result, error) {
		b, _ := json.Marshal(events.APIGatewayV2HTTPResponse{StatusCode: 201, Headers: map[string]string{"X-Route": ev.RouteKey}, Body: ev.Body})
		return runtimeapi.Result{Payload: b}, nil
	}
	tests := []struct {
		name, method, target, body string
		answer                     func(events.APIGatewayV2HTTPRequest) (runtimeapi.Result, error)
		status                     int
		check                      func(t *testing.T, ev events.APIGatewayV2HTTPRequest, rec *httptest.ResponseRecorder)
	}{
		{"post with body", "POST", "/v1/things?x=1&x=2", `{"a":1}`, ok, 201, func(t *testing.T, ev events.APIGatewayV2HTTPRequest, rec *httptest.ResponseRecorder) {
			if ev.Version != "2.0" || ev.RouteKey != "POST /v1/things" || ev.Body != `{"a":1}` || ev.QueryStringParameters["x"] != "1,2" ||
				ev.RequestContext.HTTP.Method != "POST" || ev.Headers["content-type"] != "application/json" || rec.Header().Get("X-Route") != "POST /v1/things" || rec.Body.String() != `{"a":1}` {
				t.Errorf("event %+v, response %v %q", ev, rec.Header(), rec.Body)
			}
		}},
		{"path parameter", "GET", "/v1/things/gi-1", ``, ok, 201, func(t *testing.T, ev events.APIGatewayV2HTTPRequest, _ *httptest.ResponseRecorder) {
			if ev.PathParameters["id"] != "gi-1" || ev.RouteKey != "GET /v1/things/{id}" || ev.RawPath != "/v1/things/gi-1" {
				t.Errorf("event %+v", ev)
			}
		}},
		{"greedy parameter", "DELETE", "/files/a/b/c", ``, ok, 201, func(t *testing.T, ev events.APIGatewayV2HTTPRequest, _ *httptest.ResponseRecorder) {
			if ev.PathParameters["path"] != "a/b/c" || ev.RouteKey != "ANY /files/{path+}" {
				t.Errorf("event %+v", ev)
			}
		}},
		{"binary body is base64", "POST", "/v1/things", "\xff\xfe", ok, 201, func(t *testing.T, ev events.APIGatewayV2HTTPRequest, _ *httptest.ResponseRecorder) {
			if !ev.IsBase64Encoded || ev.Body != "//4=" {
				t.Errorf("event %+v", ev)
			}
		}},
		{"unknown route", "GET", "/v2/nothing", ``, ok, 404, nil},
		// API Gateway answers a route with another method as Not Found too.
		{"wrong method", "PUT", "/v1/things", ``, ok, 404, nil},
		{"function error", "POST", "/v1/things", ``, func(events.APIGatewayV2HTTPRequest) (runtimeapi.Result, error) {
			return runtimeapi.Result{FunctionError: &runtimeapi.FunctionError{Type: "Panic", Message: "boom"}}, nil
		}, 500, nil},
		{"timeout", "POST", "/v1/things", ``, func(events.APIGatewayV2HTTPRequest) (runtimeapi.Result, error) {
			return runtimeapi.Result{}, runtimeapi.ErrTimeout
		}, 503, nil},
		// API Gateway's integration timeout: a bare 503 without a code.
		{"slower than the gateway waits", "POST", "/v1/things", ``, nil, 503, func(t *testing.T, _ events.APIGatewayV2HTTPRequest, rec *httptest.ResponseRecorder) {
			if rec.Body.String() != `{"message":"Service Unavailable"}`+"\n" {
				t.Errorf("body %q", rec.Body)
			}
		}},
		{"crash", "POST", "/v1/things", ``, func(events.APIGatewayV2HTTPRequest) (runtimeapi.Result, error) {
			return runtimeapi.Result{}, runtimeapi.ErrExited
		}, 500, nil},
		{"payload without statusCode", "POST", "/v1/things", ``, func(events.APIGatewayV2HTTPRequest) (runtimeapi.Result, error) {
			return runtimeapi.Result{Payload: []byte(`{"hello":"world"}`)}, nil
		}, 200, func(t *testing.T, _ events.APIGatewayV2HTTPRequest, rec *httptest.ResponseRecorder) {
			if rec.Body.String() != `{"hello":"world"}` {
				t.Errorf("body %q", rec.Body)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fn.answer, fn.got = tc.answer, events.APIGatewayV2HTTPRequest{}
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.check != nil {
				tc.check(t, fn.got, rec)
			}
		})
	}
}

func TestNewRejectsUnknownFunction(t *testing.T) {
	_, err := New([]template.Route{{FunctionLogicalID: "Missing", Method: "GET", Path: "/", PayloadFormatVersion: "2.0"}}, nil, Timeouts{Function: time.Second}, slog.Default())
	if err == nil || !strings.Contains(err.Error(), "Missing") {
		t.Fatalf("err = %v", err)
	}
}
