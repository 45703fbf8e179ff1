package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// binDir holds the test functions, built once for the whole package.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runtimeapi-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating build dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// CGO_ENABLED=0 matches how bootstrap binaries are built for provided.al2023.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./testdata/echo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building test functions: %v\n%s", err, out)
		return 1
	}
	binDir = dir
	return m.Run()
}

func start(t *testing.T, name string, env []string, opts ...Option) *Runtime {
	t.Helper()
	rt, err := Start(context.Background(), filepath.Join(binDir, name), env, opts...)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("function output:\n%s", rt.Logs())
		}
	})
	return rt
}

// eventually polls cond briefly: output travels through a pipe, so a line
// printed before the response may be captured just after Invoke returns.
func eventually(cond func() bool) bool {
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func invoke(t *testing.T, rt *Runtime, event string, timeout time.Duration) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return rt.Invoke(ctx, []byte(event), timeout)
}

func TestEchoRoundTrip(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo",
		[]string{"GREETING=hello", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256"},
		WithFunctionName("echo-fn"))

	for i := 0; i < 2; i++ {
		res, err := invoke(t, rt, `{"n":1}`, 3*time.Second)
		if err != nil {
			t.Fatalf("Invoke %d: %v", i, err)
		}
		if res.FunctionError != nil {
			t.Fatalf("unexpected function error %v", res.FunctionError)
		}
		var got struct {
			Echo         json.RawMessage `json:"echo"`
			RequestID    string          `json:"requestId"`
			FunctionArn  string          `json:"functionArn"`
			FunctionName string          `json:"functionName"`
			MemoryMB     int             `json:"memoryMB"`
			DeadlineInMs int64           `json:"deadlineInMs"`
			Greeting     string          `json:"greeting"`
			Handler      string          `json:"handler"`
			TraceID      string          `json:"traceId"`
		}
		if err := json.Unmarshal(res.Payload, &got); err != nil {
			t.Fatalf("decoding %s: %v", res.Payload, err)
		}
		switch {
		case string(got.Echo) != `{"n":1}`:
			t.Errorf("echo = %s", got.Echo)
		case got.RequestID != res.RequestID || len(res.RequestID) != 36:
			t.Errorf("request id: function saw %q, result has %q", got.RequestID, res.RequestID)
		case got.FunctionName != "echo-fn" || !strings.HasSuffix(got.FunctionArn, ":function:echo-fn"):
			t.Errorf("function name %q arn %q", got.FunctionName, got.FunctionArn)
		case got.MemoryMB != 256:
			t.Errorf("memory %d: caller env should override the default", got.MemoryMB)
		case got.DeadlineInMs <= 0 || got.DeadlineInMs > 3000:
			t.Errorf("deadline in %dms, want within the 3s timeout", got.DeadlineInMs)
		case got.Greeting != "hello" || got.Handler != "bootstrap":
			t.Errorf("env: GREETING=%q _HANDLER=%q", got.Greeting, got.Handler)
		case !strings.HasPrefix(got.TraceID, "Root=1-"):
			t.Errorf("trace id %q", got.TraceID)
		}
		if res.Duration <= 0 {
			t.Errorf("Duration = %v", res.Duration)
		}
		if !eventually(func() bool { return strings.Contains(rt.Logs(), "handled "+res.RequestID) }) {
			t.Errorf("logs lack the handler's line:\n%s", rt.Logs())
		}
	}
	if d := rt.InitDuration(); d <= 0 || d > 10*time.Second {
		t.Errorf("InitDuration = %v", d)
	}
}

func TestHandlerErrorIsFunctionError(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	res, err := invoke(t, rt, `{"fail":"no region"}`, 3*time.Second)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	fe := res.FunctionError
	if fe == nil || fe.Type != "BadInput" || fe.Message != "bad input: no region" {
		t.Fatalf("FunctionError = %+v, payload %s", fe, res.Payload)
	}
	// A handled error leaves the sandbox usable.
	if res, err := invoke(t, rt, `{}`, 3*time.Second); err != nil || res.FunctionError != nil {
		t.Fatalf("Invoke after error: %+v, %v", res, err)
	}
}

func TestPanicIsReportedThenSandboxIsDead(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	res, err := invoke(t, rt, `{"panic":"kaboom"}`, 3*time.Second)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if fe := res.FunctionError; fe == nil || fe.Message != "kaboom" || len(fe.StackTrace) == 0 {
		t.Fatalf("FunctionError = %+v", fe)
	}
	// aws-lambda-go exits after reporting a panic.
	_, err = invoke(t, rt, `{}`, 3*time.Second)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "after init") {
		t.Fatalf("Invoke after panic: %v", err)
	}
}

func TestInitPanicIsReportedClearly(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", []string{"INIT_PANIC=config missing at init"})
	_, err := invoke(t, rt, `{}`, 3*time.Second)
	if !errors.Is(err, ErrExited) {
		t.Fatalf("want ErrExited, got %v", err)
	}
	for _, want := range []string{"during init", "exit status 2", "panic: config missing at init"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if rt.InitDuration() != 0 {
		t.Errorf("InitDuration = %v for a function that never initialised", rt.InitDuration())
	}
	if err := rt.WaitInit(context.Background()); !errors.Is(err, ErrExited) {
		t.Errorf("WaitInit = %v", err)
	}
}

func TestPostedInitErrorIsReported(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", []string{"INIT_ERROR=1"})
	_, err := invoke(t, rt, `{}`, 3*time.Second)
	if !errors.Is(err, ErrInitFailed) || !strings.Contains(err.Error(), "Runtime.ConfigError: TABLE_NAME is not set") {
		t.Fatalf("want the posted init error, got %v", err)
	}
	if fe := rt.InitError(); fe == nil || fe.Type != "Runtime.ConfigError" {
		t.Fatalf("InitError = %+v", fe)
	}
}

func TestTimeoutThenLateResponseIsDropped(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	// Init time must not count against the bound below.
	if err := rt.WaitInit(context.Background()); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err := invoke(t, rt, `{"sleepMs":1000}`, 100*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	if took := time.Since(began); took > 700*time.Millisecond {
		t.Fatalf("timeout reported after %v", took)
	}
	// The hung handler finishes, its late response is swallowed, and the
	// next invocation gets its own answer.
	res, err := invoke(t, rt, `{"after":"timeout"}`, 3*time.Second)
	if err != nil || !strings.Contains(string(res.Payload), `"after":"timeout"`) {
		t.Fatalf("Invoke after timeout: %s, %v", res.Payload, err)
	}
}

func TestStreamedResponseErrorTrailer(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	res, err := invoke(t, rt, `{"streamFail":"disk on fire"}`, 3*time.Second)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if fe := res.FunctionError; fe == nil || fe.Message != "disk on fire" || fe.Type != "errorString" {
		t.Fatalf("FunctionError = %+v, payload %s", fe, res.Payload)
	}
}

func TestOversizedResponse(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	res, err := invoke(t, rt, fmt.Sprintf(`{"bigBytes":%d}`, maxResponseBytes+10), 5*time.Second)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if fe := res.FunctionError; fe == nil || fe.Type != errTypeTooLarge {
		t.Fatalf("FunctionError = %+v", fe)
	}
}

func TestExitDuringInvocation(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	_, err := invoke(t, rt, `{"exit":true}`, 3*time.Second)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exit status 7") {
		t.Fatalf("want ErrExited with status 7, got %v", err)
	}
}

func TestInvocationsAreSerialised(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	if err := rt.WaitInit(context.Background()); err != nil {
		t.Fatal(err)
	}
	const n, sleep = 3, 100 * time.Millisecond
	began := time.Now()
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := invoke(t, rt, fmt.Sprintf(`{"sleepMs":%d}`, sleep.Milliseconds()), 3*time.Second)
			ids[i], errs[i] = res.RequestID, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Fatalf("request ids not unique: %v", ids)
	}
	if took := time.Since(began); took < n*sleep {
		t.Fatalf("%d invocations of %v finished in %v: they overlapped", n, sleep, took)
	}
}

func TestUnknownRequestIDIsRejected(t *testing.T) {
	t.Parallel()
	rt := start(t, "echo", nil)
	resp, err := http.Post("http://"+rt.Addr()+"/2018-06-01/runtime/invocation/nope/response", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	rt, err := Start(context.Background(), filepath.Join(binDir, "echo"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.WaitInit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := rt.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := rt.Invoke(context.Background(), []byte(`{}`), time.Second); !errors.Is(err, ErrClosed) {
		t.Fatalf("Invoke after Close = %v", err)
	}
	if _, err := http.Get("http://" + rt.Addr() + "/2018-06-01/runtime/invocation/next"); err == nil {
		t.Fatal("Runtime API still serving after Close")
	}
	select {
	case <-rt.child.Done():
	default:
		t.Fatal("function process still running after Close")
	}
}

func TestStartRejectsMissingBinary(t *testing.T) {
	t.Parallel()
	_, err := Start(context.Background(), filepath.Join(t.TempDir(), "bootstrap"), nil)
	if err == nil || !strings.Contains(err.Error(), "missing or not executable") {
		t.Fatalf("Start = %v", err)
	}
}
