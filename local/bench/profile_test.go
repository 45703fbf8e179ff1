package bench

import (
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// Samples are attributed leaf first, the stand-in's are left out, and the
// bench's own frames never make the function list.
func TestSummariseProfile(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location {
		var out []*profile.Location
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{Name: n}
			}
			out = append(out, &profile.Location{Line: []profile.Line{{Function: fn[n]}}})
		}
		return out
	}
	ms := int64(time.Millisecond)
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples"}, {Type: "cpu", Unit: "nanoseconds"}}, Sample: []*profile.Sample{
		{Value: []int64{1, 6 * ms}, Location: loc("encoding/json.Marshal", "github.com/aws/aws-sdk-go-v2/service/dynamodb.(*Client).UpdateItem",
			"github.com/gamefabric-alloc/allocsvc/local/bench.(*InProcess).Allocate")},
		{Value: []int64{1, 2 * ms}, Location: loc("runtime.gcBgMarkWorker")},
		{Value: []int64{1, 2 * ms}, Location: loc("runtime.futex", "runtime.findRunnable")},
		{Value: []int64{1, 50 * ms}, Location: loc("encoding/json.Marshal", "net/http.(*conn).serve")},
	}}
	res := ProfileResult{Allocations: 2}
	summarise(&res, p)
	if res.PerCall != 5*time.Millisecond {
		t.Fatalf("per call %v, want 5ms (the stand-in's 50 ms left out)", res.PerCall)
	}
	want := map[string]float64{"JSON (encoding/json)": 0.6, "garbage collection": 0.2, "Go runtime (scheduler, other)": 0.2}
	for _, a := range res.Areas {
		if a.Share != want[a.Name] {
			t.Errorf("area %s: %.2f, want %.2f", a.Name, a.Share, want[a.Name])
		}
	}
	if len(res.Areas) != len(want) {
		t.Errorf("areas %v", res.Areas)
	}
	for _, f := range res.Top {
		if f.Name == "github.com/gamefabric-alloc/allocsvc/local/bench.(*InProcess).Allocate" || f.Name == "runtime.gcBgMarkWorker" {
			t.Errorf("%s listed", f.Name)
		}
	}
	if len(res.Top) != 2 || res.Top[0].Share != 0.6 {
		t.Errorf("top %v", res.Top)
	}
}
