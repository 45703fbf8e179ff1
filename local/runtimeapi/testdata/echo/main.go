// Command echo is a tiny aws-lambda-go function used to exercise the local
// Runtime API: it echoes its event and can be told to fail in each of the
// ways the harness must report.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	fmt.Println("echo function initialised")
	lambda.Start(handle)
}
