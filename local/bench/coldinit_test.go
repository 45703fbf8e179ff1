package bench

import (
	"testing"
	"time"
)

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
