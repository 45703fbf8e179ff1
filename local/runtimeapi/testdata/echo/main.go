// Command echo is a tiny aws-lambda-go function used to exercise the local
// Runtime API: it echoes its event and can be told to fail in each of the
// ways the harness must report, in init too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type request struct {
	Fail       string `json:"fail"`
	Panic      string `json:"panic"`
	SleepMS    int    `json:"sleepMs"`
	StreamFail string `json:"streamFail"`
	Exit       bool   `json:"exit"`
	BigBytes   int    `json:"bigBytes"`
}

// BadInput is a named error type so the reported errorType is predictable.
type BadInput struct{ Reason string }

func (e *BadInput) Error() string { return "bad input: " + e.Reason }

func handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("decoding event: %w", err)
	}
	switch {
	case req.Fail != "":
		return nil, &BadInput{Reason: req.Fail}
	case req.Panic != "":
		panic(req.Panic)
	case req.Exit:
		os.Exit(7)
	case req.StreamFail != "":
		return io.MultiReader(strings.NewReader(`{"partial":`), failingReader{errors.New(req.StreamFail)}), nil
	case req.BigBytes > 0:
		return strings.Repeat("x", req.BigBytes), nil
	case req.SleepMS > 0:
		// Deliberately deaf to ctx: this models a hung handler.
		time.Sleep(time.Duration(req.SleepMS) * time.Millisecond)
	}
	lc, _ := lambdacontext.FromContext(ctx)
	deadline, _ := ctx.Deadline()
	fmt.Println("handled", lc.AwsRequestID)
	return map[string]any{
		"echo":         raw,
		"requestId":    lc.AwsRequestID,
		"functionArn":  lc.InvokedFunctionArn,
		"functionName": lambdacontext.FunctionName,
		"memoryMB":     lambdacontext.MemoryLimitInMB,
		"deadlineInMs": time.Until(deadline).Milliseconds(),
		"greeting":     os.Getenv("GREETING"),
		"handler":      os.Getenv("_HANDLER"),
		"traceId":      os.Getenv("_X_AMZN_TRACE_ID"),
	}, nil
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func main() {
	if msg := os.Getenv("INIT_PANIC"); msg != "" {
		panic(msg)
	}
	if os.Getenv("INIT_ERROR") != "" {
		postInitError()
	}
	fmt.Println("echo function initialised")
	lambda.Start(handle)
}

// postInitError reports an init failure the way non-Go runtimes do, via
// /runtime/init/error, and then hangs instead of exiting, so the harness
// must notice the posted error rather than the exit.
func postInitError() {
	url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"errorType":"Runtime.ConfigError","errorMessage":"TABLE_NAME is not set"}`))
	req.Header.Set("Lambda-Runtime-Function-Error-Type", "Runtime.ConfigError")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	resp.Body.Close()
	fmt.Println("init error posted, status", resp.StatusCode)
	time.Sleep(time.Minute)
}
