package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// The first events are built from the repo's events/ files; they must still
// have the shape the edits rely on.
func TestColdStartEventEdits(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	decode := func(b []byte, err error) events.APIGatewayV2HTTPRequest {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		return req
	}

	alloc := decode(coldEventFor(read("allocate-new.json"), editAllocate)(3))
	id, token := coldInstance(3)
	var body map[string]any
	if err := json.Unmarshal([]byte(alloc.Body), &body); err != nil || body["gameInstanceId"] != id || body["partnerGameToken"] != token ||
		body["gameServerVersion"] != "prag::sample-game-armada-set" {
		t.Errorf("allocate body = %s (%v)", alloc.Body, err)
	}

	link := decode(coldEventFor(read("link.json"), editLink)(3))
	if link.PathParameters["gameInstanceId"] != id || !strings.Contains(link.RawPath, "/"+id+"/") ||
		link.RequestContext.HTTP.Path != link.RawPath || link.Headers["authorization"] != "Bearer "+token {
		t.Errorf("link event = %+v", link)
	}
	if noAuth := decode(coldEventFor(read("link.json"), editNoAuth)(0)); noAuth.Headers["authorization"] != "" {
		t.Errorf("authorization left in: %v", noAuth.Headers)
	}
	if post := decode(coldEventFor(read("get-regions.json"), editAsPost)(0)); post.RequestContext.HTTP.Method != "POST" || post.RouteKey != "POST /v1/regions" {
		t.Errorf("regions as POST = %+v", post.RequestContext)
	}
}

func TestColdStartAnswerChecks(t *testing.T) {
	res := func(payload string) runtimeapi.Result { return runtimeapi.Result{Payload: []byte(payload)} }
	for _, c := range []struct {
		name    string
		check   func(runtimeapi.Result) (string, error)
		res     runtimeapi.Result
		want    string
		wantErr bool
	}{
		{"the planned 400", checkAnswer(400), res(`{"statusCode":400,"body":"{}"}`), "HTTP 400", false},
		{"a 500 instead of the planned 400", checkAnswer(400), res(`{"statusCode":500,"body":"boom"}`), "", true},
		{"not an HTTP API response", checkAnswer(200), res(`"hello"`), "", true},
		{"a scheduled run's JSON", checkAnswer(0), res(`{"swept":3}`), "ok", false},
		{"a scheduled run's function error", checkAnswer(0), runtimeapi.Result{Payload: []byte(`{}`), FunctionError: &runtimeapi.FunctionError{Type: "x"}}, "", true},
		{"hello-world", checkHelloWorld, res(`{"message":"hello"}`), "ok", false},
		{"hello-world answering otherwise", checkHelloWorld, res(`{"message":"bye"}`), "", true},
	} {
		got, err := c.check(c.res)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
	}
}

func TestParseInitTrace(t *testing.T) {
	us := time.Microsecond
	for _, tc := range []struct {
		name string
		out  string
		want InitTrace
	}{
		{"nothing traced", `{"level":"INFO","msg":"health sweep finished"}`, InitTrace{Starts: 1}},
		{"grouped by whose package", `init runtime @0.021 ms, 0.036 ms clock, 0 bytes, 0 allocs
init github.com/aws/smithy-go @2.5 ms, 0.010 ms clock, 100 bytes, 2 allocs
init github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas @2.8 ms, 0.74 ms clock, 586744 bytes, 3152 allocs
init github.com/aws/aws-lambda-go/lambdacontext @2.5 ms, 0.016 ms clock, 3560 bytes, 11 allocs
init github.com/gamefabric-alloc/allocsvc/shared/store @6.0 ms, 0.030 ms clock, 2800 bytes, 20 allocs
init main @6.1 ms, 0.002 ms clock, 16 bytes, 1 allocs
{"level":"INFO","msg":"not a trace line: init x"}
init broken @1 ms, x ms clock, 1 bytes, 1 allocs`,
			InitTrace{Starts: 1, SDK: 750 * us, SDKBytes: 586844, Ours: 32 * us, Other: 52 * us,
				Largest: "github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas", LargestClock: 740 * us}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseInitTrace(tc.out); got != tc.want {
				t.Errorf("ParseInitTrace = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMedianTrace(t *testing.T) {
	ms := time.Millisecond
	trace := func(sdk time.Duration, largest string) InitTrace {
		return InitTrace{Starts: 1, SDK: sdk, Ours: sdk / 10, Other: sdk / 2, SDKBytes: int64(sdk / ms), Largest: largest, LargestClock: sdk / 2}
	}
	for _, tc := range []struct {
		name string
		in   []InitTrace
		want InitTrace
	}{
		{"none", nil, InitTrace{}},
		{"one", []InitTrace{trace(2*ms, "a")}, trace(2*ms, "a")},
		{"three: each figure's median, the most frequent largest package", []InitTrace{trace(3*ms, "b"), trace(1*ms, "a"), trace(2*ms, "b")},
			InitTrace{Starts: 3, SDK: 2 * ms, Ours: 200 * time.Microsecond, Other: ms, SDKBytes: 2, Largest: "b", LargestClock: ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := medianTrace(tc.in); got != tc.want {
				t.Errorf("medianTrace = %+v, want %+v", got, tc.want)
			}
		})
	}
}
