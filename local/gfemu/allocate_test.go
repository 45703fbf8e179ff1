package gfemu

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

func TestAllocateForwardsPayloadAndReturnsAnswer(t *testing.T) {
	f := newFixture(t, nil)
	g := newGameServer(t, answering(http.StatusOK, `{"session":"s-1","ready":true}`))
	f.mustRegister(registerBody("127.0.0.1:7001", 0, g, "cb-secret"))

	payload := `{"GameInstanceId":"g-1","ServerArgs":["-x"]}`
	r := f.do(http.MethodPost, prefix+"/allocate", "alloc-old", // any listed token works during rotation
		`{"region":"us-west","attributes":{"env":"prag"},"payload":`+payload+`}`)
	if r.status != http.StatusOK {
		t.Fatalf("allocate = %d %s", r.status, r.body)
	}
	var got gamefabric.Allocation
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	want := gamefabric.Allocation{Address: "127.0.0.1:7001", IP: "127.0.0.1", Ports: map[string]int{"game": 7001, "alloc": 7101},
		Token: "cb-secret", Payload: json.RawMessage(`{"session":"s-1","ready":true}`)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answer = %+v, want %+v", got, want)
	}
	calls := g.Calls()
	if len(calls) != 1 {
		t.Fatalf("callback called %d times, want 1", len(calls))
	}
	if c := calls[0]; c.auth != "cb-secret" || c.contentType != "application/json" || c.body != payload {
		t.Fatalf("callback got %+v, want the bare token and the payload verbatim", c)
	}
	if len(f.emu.Servers()) != 0 {
		t.Fatal("allocated server is still registered")
	}
	allocs := f.emu.Allocations()
	if len(allocs) != 1 || allocs[0].Region != "us-west" || allocs[0].Server != "127.0.0.1:7001" ||
		allocs[0].Token != "alloc-old" || allocs[0].Payload["GameInstanceId"] != "g-1" {
		t.Fatalf("Allocations() = %+v", allocs)
	}
}

func TestAllocateNoServerLeft(t *testing.T) {
	f := newFixture(t, nil)
	dead := newGameServer(t, answering(http.StatusInternalServerError, ``))
	good := newGameServer(t, answering(http.StatusOK, `{}`))
	f.mustRegister(registerBody("127.0.0.1:7001", 0, dead, "a"))
	f.mustRegister(registerBody("127.0.0.1:7002", 0, good, "b"))
	f.mustRegister(`{"address":"127.0.0.1:7003","priority":0,"region":"eu-west"}`)

	tests := []struct {
		name, body string
		status     int
		wantErr    string
	}{
		{"wrong attributes", `{"region":"us-west","attributes":{"env":"prod"}}`, 404, "no game server available in region us-west matching attributes {env=prod}"},
		{"unknown region", `{"region":"ap-south","attributes":{"b":"2","a":"1"}}`, 404, "in region ap-south matching attributes {a=1, b=2}"},
		{"dead one dropped, good one allocated", `{"region":"us-west"}`, 200, ""},
		{"none left", `{"region":"us-west","attributes":{"env":"prag"}}`, 404, "no game server available in region us-west"},
		{"other region still there", `{"region":"eu-west"}`, 200, ""},
	}
	for _, tc := range tests {
		r := f.allocate(tc.body)
		if r.status != tc.status {
			t.Fatalf("%s: allocate = %d %s, want %d", tc.name, r.status, r.body, tc.status)
		}
		if tc.wantErr != "" && !strings.Contains(r.errorText(t), tc.wantErr) {
			t.Fatalf("%s: error %q, want it to contain %q", tc.name, r.errorText(t), tc.wantErr)
		}
	}

	only := newFixture(t, nil)
	only.mustRegister(registerBody("127.0.0.1:7001", 0, dead, "a"))
	r := only.allocate(`{"region":"us-west"}`)
	if r.status != http.StatusNotFound || !strings.Contains(r.errorText(t), "1 failed their allocation callback") {
		t.Fatalf("allocate with only a dead server = %d %s, want 404 naming the failure", r.status, r.body)
	}
}

func TestAllocateBadRequest(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct{ name, body, wantErr string }{
		{"empty body", ``, "body is empty"},
		{"not JSON", `region=us-west`, "invalid JSON body"},
		{"not an object", `["us-west"]`, "invalid JSON body"},
		{"no region", `{"attributes":{"env":"prag"}}`, "region is required"},
		{"empty region", `{"region":""}`, "region is required"},
		{"non-string attribute", `{"region":"r","attributes":{"n":1}}`, "invalid JSON body"},
		{"unknown field", `{"region":"r","regions":["r"]}`, `unknown field "regions"`},
		{"invalid payload", `{"region":"r","payload":{]}`, "invalid JSON body"},
		{"trailing data", `{"region":"r"}x`, "data after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.allocate(tc.body)
			if r.status != http.StatusBadRequest || !strings.Contains(r.errorText(t), tc.wantErr) {
				t.Fatalf("allocate = %d %s, want 400 containing %q", r.status, r.body, tc.wantErr)
			}
		})
	}
}

func TestAllocateRateLimit(t *testing.T) {
	tests := []struct {
		name      string
		qps       float64
		burst     int
		wantBurst int
		refill    time.Duration // time for one token
		// retryAfter is the honest Retry-After: the refill, in whole seconds.
		retryAfter string
	}{
		{name: "explicit burst", qps: 1, burst: 3, wantBurst: 3, refill: time.Second, retryAfter: "1"},
		{name: "default burst is ceil(QPS)", qps: 2.5, wantBurst: 3, refill: 400 * time.Millisecond, retryAfter: "1"},
		{name: "default burst at least 1", qps: 0.5, wantBurst: 1, refill: 2 * time.Second, retryAfter: "2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *Config) { c.QPS, c.Burst = tc.qps, tc.burst })
			body := `{"region":"nowhere"}` // 404 still spends a token
			if r := f.do(http.MethodPost, prefix+"/allocate", "wrong", body); r.status != http.StatusUnauthorized {
				t.Fatalf("unauthorized allocate = %d", r.status)
			}
			for i := range tc.wantBurst {
				if r := f.allocate(body); r.status != http.StatusNotFound {
					t.Fatalf("call %d within burst = %d %s", i+1, r.status, r.body)
				}
			}
			r := f.allocate(body)
			if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != tc.retryAfter || r.errorText(t) != "rate limit exceeded" {
				t.Fatalf("call beyond burst = %d %v %s, want 429 with Retry-After: %s", r.status, r.header, r.body, tc.retryAfter)
			}
			f.clock.Advance(tc.refill - time.Millisecond)
			if r := f.allocate(body); r.status != http.StatusTooManyRequests {
				t.Fatalf("before refill = %d, want 429", r.status)
			}
			f.clock.Advance(time.Millisecond)
			if r := f.allocate(body); r.status != http.StatusNotFound {
				t.Fatalf("after refill = %d %s, want the call let through", r.status, r.body)
			}
			if r := f.allocate(body); r.status != http.StatusTooManyRequests {
				t.Fatalf("after spending the refilled token = %d, want 429", r.status)
			}
			f.clock.Advance(time.Hour) // refills to the burst, not beyond
			for i := range tc.wantBurst {
				if r := f.allocate(body); r.status != http.StatusNotFound {
					t.Fatalf("call %d after a long pause = %d", i+1, r.status)
				}
			}
			if r := f.allocate(body); r.status != http.StatusTooManyRequests {
				t.Fatalf("bucket grew beyond its burst: %d", r.status)
			}
		})
	}
}

func TestAllocateConcurrentHandsOutEachServerOnce(t *testing.T) {
	const servers, callers = 5, 20
	f := newFixture(t, nil)
	g := newGameServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond) // widen the race window
		_, _ = io.WriteString(w, `{}`)
	})
	for i := range servers {
		f.mustRegister(registerBody(fmt.Sprintf("127.0.0.1:%d", 7001+i), 0, g, fmt.Sprintf("cb-%d", i)))
	}

	type result struct {
		status  int
		address string
		err     error
	}
	results := make(chan result, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest(http.MethodPost, f.srv.URL+prefix+"/allocate", strings.NewReader(`{"region":"us-west"}`))
			req.Header.Set("Authorization", "Bearer "+allocTok)
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			var a gamefabric.Allocation
			_ = json.NewDecoder(resp.Body).Decode(&a)
			results <- result{status: resp.StatusCode, address: a.Address}
		}()
	}
	close(start)
	wg.Wait()
	close(results)

	seen := map[string]bool{}
	notFound := 0
	for r := range results {
		switch {
		case r.err != nil:
			t.Fatal(r.err)
		case r.status == http.StatusOK:
			if seen[r.address] {
				t.Fatalf("%s handed out twice", r.address)
			}
			seen[r.address] = true
		case r.status == http.StatusNotFound:
			notFound++
		default:
			t.Fatalf("unexpected status %d", r.status)
		}
	}
	if len(seen) != servers || notFound != callers-servers {
		t.Fatalf("%d allocated, %d not found; want %d and %d", len(seen), notFound, servers, callers-servers)
	}
	if calls := g.Calls(); len(calls) != servers {
		t.Fatalf("%d callbacks, want %d", len(calls), servers)
	}
	tokens := map[string]bool{}
	for _, c := range g.Calls() {
		tokens[c.auth] = true
	}
	if len(tokens) != servers || len(f.emu.Allocations()) != servers {
		t.Fatalf("callback tokens %v, allocations %d: want each server called once", tokens, len(f.emu.Allocations()))
	}
}

// A scripted region is answered from its script, queue first, without
// asking the registry; every call is logged with what it was answered.
func TestScriptedAnswers(t *testing.T) {
	f := newFixture(t, nil)
	g := newGameServer(t, answering(http.StatusOK, `{}`))
	f.mustRegister(registerBody("127.0.0.1:7001", 0, g, "cb"))
	f.emu.Queue("us-west", Answer{Status: http.StatusServiceUnavailable, Error: "full", RetryAfter: "3"})
	f.emu.Always("us-west", Answer{})
	body := `{"region":"us-west","payload":{"GameInstanceId":"g-1"}}`
	if r := f.allocate(body); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "3" || r.errorText(t) != "full" {
		t.Fatalf("first allocate = %d %q %s, want the queued 503", r.status, r.header.Get("Retry-After"), r.body)
	}
	r := f.allocate(body)
	if got := r.json(t); r.status != http.StatusOK || got["address"] != "127.0.0.1:7000" || got["token"] != "callback-7000" ||
		!reflect.DeepEqual(got["payload"], map[string]any{"accepted": "g-1"}) {
		t.Fatalf("second allocate = %d %s, want the made-up allocation", r.status, r.body)
	}
	if len(g.Calls()) != 0 || len(f.emu.Servers()) != 1 {
		t.Fatal("a scripted region asked the registry")
	}
	calls := f.emu.Calls()
	if len(calls) != 2 || calls[0].Answered != 503 || calls[0].Server != "" || calls[1].Answered != 200 ||
		calls[1].Server != "127.0.0.1:7000" || calls[1].Token != allocTok || calls[1].Payload["GameInstanceId"] != "g-1" {
		t.Fatalf("Calls() = %+v", calls)
	}
}
