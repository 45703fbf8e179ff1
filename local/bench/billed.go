package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// BilledResult is the allocate function's own duration per invocation, as
// Lambda measures it (event handed over → response received) from one warm
// sandbox of the real bootstrap; the mean and p99 of each rounded up to
// Lambda's 1 ms; the process's user+system CPU time per invocation
// (/proc/<pid>/stat, 10 ms ticks over the run); and its stdout+stderr per
// invocation, what CloudWatch Logs would ingest before the platform records.
type BilledResult struct {
	Duration                  Summary
	BilledMeanMs, BilledP99Ms float64
	CPUPerInvocation          time.Duration
	LogBytes, LogLines        float64
}

// MeasureBilled starts one sandbox of the allocate bootstrap with the
// stack's environment through the Runtime API harness, warms it up, and
// invokes n fresh allocations one after another.
func MeasureBilled(ctx context.Context, s *Stack, n int, log io.Writer) (BilledResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var res BilledResult
	env, err := s.FunctionEnv(AllocateFunction, s.Refs)
	if err != nil {
		return res, err
	}
	out := &countingWriter{}
	rt, err := runtimeapi.Start(ctx, s.Bin, env, runtimeapi.WithFunctionName(AllocateFunction), runtimeapi.WithLogOutput(out))
	if err != nil {
		return res, fmt.Errorf("billed duration: start the sandbox: %w", err)
	}
	defer rt.Close()
	run := runID()
	invoke := func(i int) (time.Duration, error) {
		ev, _ := json.Marshal(apiEvent(allocateRequest(fmt.Sprintf("billed-%s-%d", run, i), RegionOK), i))
		r, err := rt.Invoke(ctx, ev, functionTimeout)
		if err != nil {
			return 0, fmt.Errorf("billed duration: invoke: %w", err)
		}
		var resp events.APIGatewayV2HTTPResponse
		if r.FunctionError != nil || json.Unmarshal(r.Payload, &resp) != nil || resp.StatusCode != http.StatusCreated {
			return 0, fmt.Errorf("billed duration: invocation answered %s %v:\n%s", r.Payload, r.FunctionError, rt.Logs())
		}
		return r.Duration, nil
	}
	// The first invocation is a cold start and fetches the token; a few
	// more settle connection pools before measuring.
	for i := range 5 {
		if _, err := invoke(-1 - i); err != nil {
			return res, err
		}
	}
	sandbox, err := sandboxProcess(rt.Addr())
	if err != nil {
		return res, fmt.Errorf("billed duration: %w", err)
	}
	cpu0, err := sandbox.Stat()
	if err != nil {
		return res, err
	}
	time.Sleep(50 * time.Millisecond) // let the warm-up's log lines through the pipe
	bytes0, lines0 := out.counts()
	var durations, billed []time.Duration
	for i := range n {
		d, err := invoke(i)
		if err != nil {
			return res, err
		}
		durations, billed = append(durations, d), append(billed, time.Duration(math.Ceil(toMs(d)))*time.Millisecond)
	}
	cpu1, err := sandbox.Stat()
	if err != nil {
		return res, err
	}
	time.Sleep(50 * time.Millisecond)
	bytes1, lines1 := out.counts()
	res.Duration = Summarize(durations)
	b := Summarize(billed)
	res.BilledMeanMs, res.BilledP99Ms = toMs(b.Mean), toMs(b.P99)
	res.CPUPerInvocation = time.Duration((cpu1.CPUTime() - cpu0.CPUTime()) / float64(n) * float64(time.Second))
	res.LogBytes, res.LogLines = float64(bytes1-bytes0)/float64(n), float64(lines1-lines0)/float64(n)
	progress(log, "billed duration: p50 %s p99 %s, billed mean %.1f ms, CPU %s per invocation, %.0f log bytes per invocation",
		fmtMs(res.Duration.P50), fmtMs(res.Duration.P99), res.BilledMeanMs, fmtMs(res.CPUPerInvocation), res.LogBytes)
	return res, nil
}
