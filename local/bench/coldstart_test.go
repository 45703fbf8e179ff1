package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
