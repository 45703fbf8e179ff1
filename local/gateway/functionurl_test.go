package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// recorded keeps the event a function URL sent and what it was invoked
// with, and answers as the test says.
type recorded struct {
	event    map[string]any
	timeout  time.Duration
	reserved int
	deadline bool
	answer   func() (runtimeapi.Result, error)
}

func (f *recorded) InvokeReserved(ctx context.Context, event []byte, timeout time.Duration, reserved int) (runtimeapi.Result, error) {
	f.event, f.timeout, f.reserved = nil, timeout, reserved
	_, f.deadline = ctx.Deadline()
	if err := json.Unmarshal(event, &f.event); err != nil {
		return runtimeapi.Result{}, err
	}
	if f.answer == nil {
		return runtimeapi.Result{Payload: []byte(`{"statusCode":200,"body":"ok"}`)}, nil
	}
	return f.answer()
}

func testURL() FunctionURL {
	return FunctionURL{Function: "Fn", ID: URLID("FnUrl"), Region: "us-east-1", Timeout: 3 * time.Second, Reserved: 7}
}

// The event is payload format 2.0 exactly as Lambda's function URLs send
// it: one $default route for every path and method, no path parameters or
// stage variables, an anonymous caller, the URL's id and domain, the
// headers Lambda adds, and a body base64-encoded unless it is text.
func TestFunctionURLEvent(t *testing.T) {
	fn := &recorded{}
	h := NewFunctionURL(testURL(), fn, quiet)
	id := URLID("FnUrl")
	if !regexp.MustCompile(`^[a-z0-9]{32}$`).MatchString(id) || id != URLID("FnUrl") || id == URLID("OtherUrl") {
		t.Fatalf("URLID = %q: want 32 letters and digits, the same for the same URL only", id)
	}
	req := httptest.NewRequest("POST", "http://127.0.0.1:3001/v1/game-instances/gi%2F1/link?a=1&a=2&b=", strings.NewReader(`{"x":1}`))
	req.RemoteAddr = "127.0.0.1:5555"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sdk/1")
	req.Header.Add("X-Custom", "one")
	req.Header.Add("X-Custom", "two")
	req.Header.Add("Cookie", "c1=v1; c2=v2")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != "ok" {
		t.Fatalf("answer %d %q", rec.Code, rec.Body)
	}
	ev := fn.event
	want := map[string]any{
		"version": "2.0", "routeKey": "$default", "rawPath": "/v1/game-instances/gi%2F1/link", "rawQueryString": "a=1&a=2&b=",
		"cookies": []any{"c1=v1", "c2=v2"}, "queryStringParameters": map[string]any{"a": "1,2", "b": ""},
		"body": `{"x":1}`, "isBase64Encoded": false,
	}
	for k, v := range want {
		if !reflect.DeepEqual(ev[k], v) {
			t.Errorf("%s = %#v, want %#v", k, ev[k], v)
		}
	}
	for _, absent := range []string{"pathParameters", "stageVariables"} {
		if _, ok := ev[absent]; ok {
			t.Errorf("the event has %s", absent)
		}
	}
	checkURLHeaders(t, ev["headers"].(map[string]any))
	checkURLContext(t, ev["requestContext"].(map[string]any), id)
	if fn.timeout != 3*time.Second || fn.reserved != 7 || fn.deadline {
		t.Errorf("invoked with timeout %s, reserved %d, a deadline of its own %v: want the function's 3 s and 7, and none",
			fn.timeout, fn.reserved, fn.deadline)
	}
}

func checkURLHeaders(t *testing.T, headers map[string]any) {
	t.Helper()
	for k, v := range map[string]string{"content-type": "application/json", "user-agent": "sdk/1", "x-custom": "one,two",
		"host": "127.0.0.1:3001", "x-forwarded-for": "127.0.0.1", "x-forwarded-proto": "http", "x-forwarded-port": "3001"} {
		if headers[k] != v {
			t.Errorf("header %s = %v, want %q", k, headers[k], v)
		}
	}
	if _, ok := headers["cookie"]; ok {
		t.Error("the cookies are in the headers too")
	}
	if trace, _ := headers["x-amzn-trace-id"].(string); !regexp.MustCompile(`^Root=1-[0-9a-f]{8}-[0-9a-f]{24}$`).MatchString(trace) {
		t.Errorf("x-amzn-trace-id = %q", trace)
	}
}

func checkURLContext(t *testing.T, rc map[string]any, id string) {
	t.Helper()
	want := map[string]any{
		"accountId": "anonymous", "apiId": id, "domainPrefix": id, "domainName": id + ".lambda-url.us-east-1.on.aws",
		"routeKey": "$default", "stage": "$default", "authentication": nil,
		"http": map[string]any{"method": "POST", "path": "/v1/game-instances/gi/1/link", "protocol": "HTTP/1.1",
			"sourceIp": "127.0.0.1", "userAgent": "sdk/1"},
	}
	for k, v := range want {
		if got, ok := rc[k]; !ok || !reflect.DeepEqual(got, v) {
			t.Errorf("requestContext.%s = %#v, want %#v", k, got, v)
		}
	}
	if _, ok := rc["authorizer"]; ok {
		t.Error("requestContext has an authorizer with AuthType NONE")
	}
	if id, _ := rc["requestId"].(string); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("requestId = %q, want a UUID", id)
	}
	at, err := time.Parse("02/Jan/2006:15:04:05 -0700", rc["time"].(string))
	epoch, _ := rc["timeEpoch"].(float64)
	if err != nil || time.Since(at) > time.Minute || int64(epoch)/1000 != at.Unix() {
		t.Errorf("time %v (%v), timeEpoch %v", rc["time"], err, rc["timeEpoch"])
	}
}

// Lambda passes text bodies as they are and base64-encodes the rest, by
// Content-Type, whatever the bytes.
func TestFunctionURLBodies(t *testing.T) {
	fn := &recorded{}
	h := NewFunctionURL(testURL(), fn, quiet)
	for _, tc := range []struct {
		contentType, body string
		base64            bool
	}{
		{"application/json; charset=utf-8", `{"a":1}`, false},
		{"text/plain", "hello", false},
		{"text/html; charset=utf-8", "<p>", false},
		{"application/octet-stream", "\xff\xfe", true},
		{"application/x-www-form-urlencoded", "a=1", true},
		{"", `{"a":1}`, true},
	} {
		req := httptest.NewRequest("PUT", "/anything/at/all", strings.NewReader(tc.body))
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		want := tc.body
		if tc.base64 {
			want = base64.StdEncoding.EncodeToString([]byte(tc.body))
		}
		if fn.event["body"] != want || fn.event["isBase64Encoded"] != tc.base64 {
			t.Errorf("%q: body %v, isBase64Encoded %v; want %q, %v", tc.contentType, fn.event["body"], fn.event["isBase64Encoded"], want, tc.base64)
		}
	}
	req := httptest.NewRequest("GET", "/", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if _, ok := fn.event["body"]; ok || fn.event["isBase64Encoded"] != false {
		t.Errorf("a request without a body: body %v, isBase64Encoded %v", fn.event["body"], fn.event["isBase64Encoded"])
	}
}

// A function URL answers what its function answered, as an HTTP API does,
// refuses a body over Lambda's 6 MB without invoking anything, and 429 when
// the function's reserved concurrency is in use.
func TestFunctionURLAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		answer func() (runtimeapi.Result, error)
		status int
		text   string
	}{
		{"response", "", func() (runtimeapi.Result, error) {
			return runtimeapi.Result{Payload: []byte(`{"statusCode":201,"headers":{"x-a":"b"},"body":"made"}`)}, nil
		}, 201, "made"},
		{"payload without statusCode", "", func() (runtimeapi.Result, error) {
			return runtimeapi.Result{Payload: []byte(`{"hello":"world"}`)}, nil
		}, 200, `{"hello":"world"}`},
		{"throttled", "", func() (runtimeapi.Result, error) { return runtimeapi.Result{}, ErrThrottled }, 429, `{"message":"Rate Exceeded."}` + "\n"},
		{"function error", "", func() (runtimeapi.Result, error) {
			return runtimeapi.Result{FunctionError: &runtimeapi.FunctionError{Type: "Panic", Message: "boom"}}, nil
		}, 500, `{"message":"Internal Server Error"}` + "\n"},
		{"over 6 MB", strings.Repeat("x", maxURLBody+1), nil, 413, `{"message":"Request Entity Too Large"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn := &recorded{answer: tc.answer}
			rec := httptest.NewRecorder()
			NewFunctionURL(testURL(), fn, quiet).ServeHTTP(rec, httptest.NewRequest("POST", "/x", strings.NewReader(tc.body)))
			if rec.Code != tc.status || rec.Body.String() != tc.text {
				t.Fatalf("answer %d %q, want %d %q", rec.Code, rec.Body, tc.status, tc.text)
			}
			if tc.status == http.StatusRequestEntityTooLarge && fn.event != nil {
				t.Error("the function was invoked with a body over the limit")
			}
		})
	}
}
