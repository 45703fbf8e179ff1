package bench

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

func msList(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

func TestColdStartStatistics(t *testing.T) {
	odd := msList(30, 10, 20, 50, 40)
	even := msList(40, 10, 30, 20)
	ten := msList(10, 1, 9, 2, 8, 3, 7, 4, 6, 5)
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"median odd", csMedian(odd), 30 * time.Millisecond},
		{"median even averages the middle two", csMedian(even), 25 * time.Millisecond},
		{"median empty", csMedian(nil), 0},
		{"p90 of ten is the 9th", csPercentile(ten, 90), 9 * time.Millisecond},
		{"p0 is the minimum", csPercentile(ten, 0), 1 * time.Millisecond},
		{"p100 is the maximum", csPercentile(ten, 100), 10 * time.Millisecond},
		{"p90 of one", csPercentile(msList(7), 90), 7 * time.Millisecond},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if odd[0] != 30*time.Millisecond {
		t.Errorf("statistics must not reorder the caller's samples: %v", odd)
	}
	if r := durRatio(13*time.Millisecond, 10*time.Millisecond); math.Abs(r-1.3) > 1e-9 {
		t.Errorf("ratio = %v", r)
	}
	if r := durRatio(time.Millisecond, 0); !math.IsNaN(r) || (ColdStartSeries{Ratio: r}).MeetsGoal(ColdStartGoalRatio) {
		t.Errorf("a missing baseline must never meet the goal: ratio %v", r)
	}
	if !(ColdStartSeries{Ratio: 1.3}).MeetsGoal(1.3) || (ColdStartSeries{Ratio: 1.31}).MeetsGoal(1.3) {
		t.Error("the goal is inclusive at 1.3×")
	}
	if got := csMillis(12345678 * time.Nanosecond); got != "12.3" {
		t.Errorf("csMillis = %q", got)
	}
}

func TestColdStartOptionsNeedTenStarts(t *testing.T) {
	if _, err := (ColdStartOptions{Root: ".", WorkDir: "w", Starts: 9}).normalized(); err == nil {
		t.Error("9 starts accepted")
	}
	o, err := (ColdStartOptions{Root: "/repo", WorkDir: ".cache/bench"}).normalized()
	if err != nil || o.Starts != DefaultStarts || o.WorkDir != "/repo/.cache/bench" {
		t.Errorf("normalized = %+v, %v", o, err)
	}
}

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
	if got, err := checkAnswer(400)(res(`{"statusCode":400,"body":"{}"}`)); err != nil || got != "HTTP 400" {
		t.Errorf("400: %q, %v", got, err)
	}
	if _, err := checkAnswer(400)(res(`{"statusCode":500,"body":"boom"}`)); err == nil {
		t.Error("a 500 passed as the planned 400")
	}
	if _, err := checkAnswer(0)(runtimeapi.Result{Payload: []byte(`{}`), FunctionError: &runtimeapi.FunctionError{Type: "x"}}); err == nil {
		t.Error("a function error passed")
	}
	if _, err := checkHelloWorld(res(`{"message":"hello"}`)); err != nil {
		t.Error(err)
	}
}

func TestColdStartReportText(t *testing.T) {
	series := func(median, init time.Duration, ratio float64) ColdStartSeries {
		return ColdStartSeries{Event: "e", Answer: "HTTP 400", Median: median, P90: median, Min: median, Max: median,
			InitMedian: init, Ratio: ratio, InitRatio: ratio}
	}
	realistic := series(40*time.Millisecond, 12*time.Millisecond, 4)
	r := &ColdStartReport{Starts: 15, GoalRatio: 1.3, Platform: "linux/amd64",
		Hello: series(10*time.Millisecond, 8*time.Millisecond, 1),
		Functions: []FunctionColdStart{
			{Name: "AllocateFunction", First: series(12*time.Millisecond, 10*time.Millisecond, 1.2), Realistic: &realistic},
			{Name: "HealthSweepFunction", Scheduled: true, First: series(20*time.Millisecond, 9*time.Millisecond, 2)},
		}}
	text := r.Text()
	for _, want := range []string{"AllocateFunction", "1.20", "ok", "HealthSweepFunction", "FAIL", "40.0"} {
		if !strings.Contains(text, want) {
			t.Errorf("Text lacks %q:\n%s", want, text)
		}
	}
	md := r.Markdown()
	for _, want := range []string{"### Cold start", "| AllocateFunction | 12.0 |", "40.0 (4.00×)", "same as first (scheduled)", "**no**"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if r.AllMeetGoal() {
		t.Error("AllMeetGoal with a 2× function")
	}
}
