package gameserver

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: the heartbeat loop's, or a
// retry's sleeping one.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testToken = "pgt-secret-0123456789abcdef-XYZ"

// answer is one scripted response. Status -1 drops the connection.
type answer struct {
	status int
	body   string
	header map[string]string
}

func linked(id string) answer {
	return answer{200, `{"gameInstanceId":"` + id + `","state":"Linked"}`, nil}
}

func apiErr(status int, code, state, retryAfter string) answer {
	a := answer{status: status, body: `{"error":{"code":"` + code + `","message":"scripted","state":"` + state + `"}}`}
	if retryAfter != "" {
		a.header = map[string]string{"Retry-After": retryAfter}
	}
	return a
}

// received is one request the fake backend saw.
type received struct {
	op, path, auth, contentType, body string
	at                                time.Time
}

// fakeBackend answers the game-server routes from a script per call;
// once a script is used up it answers fallback[op] (200 Linked if unset).
type fakeBackend struct {
	*httptest.Server
	mu       sync.Mutex
	script   map[string][]answer
	fallback map[string]answer
	got      []received
}

func newFakeBackend(t *testing.T, prefix string) *fakeBackend {
	f := &fakeBackend{script: map[string][]answer{}, fallback: map[string]answer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+prefix+"/v1/game-instances/{id}/{op}", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		op := r.PathValue("op")
		f.mu.Lock()
		f.got = append(f.got, received{op: op, path: r.URL.Path, auth: r.Header.Get("Authorization"),
			contentType: r.Header.Get("Content-Type"), body: string(body), at: time.Now()})
		a, ok := f.fallback[op]
		if !ok {
			a = linked(r.PathValue("id"))
		}
		if q := f.script[op]; len(q) > 0 {
			a, f.script[op] = q[0], q[1:]
		}
		f.mu.Unlock()
		if a.status == -1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeBackend) queue(op string, as ...answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script[op] = append(f.script[op], as...)
}

func (f *fakeBackend) always(op string, a answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fallback[op] = a
}

func (f *fakeBackend) requests(op string) []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []received
	for _, r := range f.got {
		if r.op == op {
			out = append(out, r)
		}
	}
	return out
}

// newTestClient is a client of f with short waits. Its logs go to the
// returned buffer (and to the test log when verbose).
func newTestClient(t *testing.T, f *fakeBackend, tune func(*Options)) (*Client, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	tr := &http.Transport{}
	// Idle keep-alive connections would otherwise outlive the test.
	t.Cleanup(tr.CloseIdleConnections)
	o := Options{
		Payload:    Payload{GameInstanceID: "gi-1", PartnerGameToken: testToken, BackendAddress: f.URL},
		HTTPClient: &http.Client{Transport: tr, Timeout: 5 * time.Second},
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxWait:    2 * time.Second, HealthPeriod: 300 * time.Millisecond,
	}
	if tune != nil {
		tune(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if testing.Verbose() {
			t.Logf("client logs:\n%s", logs)
		}
		if strings.Contains(logs.String(), testToken) {
			t.Error("the token appears in the logs")
		}
	})
	return c, logs
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a log sink the client's goroutines write while a test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
