package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

var echoBuild struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if echoBuild.path != "" {
		_ = os.RemoveAll(filepath.Dir(echoBuild.path))
	}
	os.Exit(code)
}

// echoPool is a pool of size sandboxes of the runtime API's echo function
// (local/runtimeapi/testdata/echo), a real bootstrap.
func echoPool(t *testing.T, size int) *Pool {
	t.Helper()
	echoBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "gateway-echo-")
		if err != nil {
			echoBuild.err = err
			return
		}
		echoBuild.path = filepath.Join(dir, "echo")
		cmd := exec.Command("go", "build", "-o", echoBuild.path, "../runtimeapi/testdata/echo")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			echoBuild.err = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if echoBuild.err != nil {
		t.Fatalf("building the echo function: %v", echoBuild.err)
	}
	p := NewPool("Echo", size, func(ctx context.Context) (*runtimeapi.Runtime, error) {
		return runtimeapi.Start(ctx, echoBuild.path, nil, runtimeapi.WithFunctionName("Echo"))
	})
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func (p *Pool) running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inFlight
}

// The pool throttles at a reservation as Lambda does: an invocation that
// finds the reserved number in flight (whoever made them) fails at once and
// runs nothing; one made without a reservation waits for a sandbox; once
// the slow one is done the reservation admits again.
func TestPoolReservedConcurrency(t *testing.T) {
	p := echoPool(t, 2)
	ctx := context.Background()
	slow := make(chan error, 1)
	go func() {
		_, err := p.Invoke(ctx, []byte(`{"sleepMs":1500}`), 10*time.Second)
		slow <- err
	}()
	testkit.WaitFor(t, 10*time.Second, "the slow invocation in flight", func() bool { return p.running() == 1 })
	start := time.Now()
	if _, err := p.InvokeReserved(ctx, []byte(`{}`), 10*time.Second, 1); !errors.Is(err, ErrThrottled) || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("with 1 reserved and 1 in flight: %v after %s, want ErrThrottled at once", err, time.Since(start))
	}
	if res, err := p.InvokeReserved(ctx, []byte(`{}`), 10*time.Second, 2); err != nil || res.FunctionError != nil {
		t.Fatalf("with 2 reserved and 1 in flight: %v %v", err, res.FunctionError)
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if _, err := p.InvokeReserved(ctx, []byte(`{}`), 10*time.Second, 1); err != nil {
		t.Fatalf("with 1 reserved and none in flight: %v", err)
	}
}

// A function URL in front of a real bootstrap: the function gets the event
// (the echo function answers it back), and a call beyond the function's
// reserved concurrency is answered 429 while the function is busy.
func TestFunctionURLThroughARuntime(t *testing.T) {
	p := echoPool(t, 2)
	u := testURL()
	u.Reserved = 1
	srv := httptest.NewServer(NewFunctionURL(u, p, quiet))
	t.Cleanup(srv.Close)

	resp, err := http.Post(srv.URL+"/v1/game-instances/gi-1/heartbeat", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Echo struct {
			RouteKey string `json:"routeKey"`
			RawPath  string `json:"rawPath"`
			Context  struct {
				DomainName string `json:"domainName"`
			} `json:"requestContext"`
		} `json:"echo"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || got.Echo.RouteKey != "$default" || got.Echo.RawPath != "/v1/game-instances/gi-1/heartbeat" ||
		got.Echo.Context.DomainName != u.ID+".lambda-url.us-east-1.on.aws" {
		t.Fatalf("%d %+v %v", resp.StatusCode, got, err)
	}

	slow := make(chan error, 1)
	go func() {
		_, err := p.Invoke(context.Background(), []byte(`{"sleepMs":1500}`), 10*time.Second)
		slow <- err
	}()
	testkit.WaitFor(t, 10*time.Second, "the slow invocation in flight", func() bool { return p.running() == 1 })
	resp, err = http.Post(srv.URL+"/v1/game-instances/gi-1/heartbeat", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("while the reservation is in use: %d, want 429", resp.StatusCode)
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}
