//go:build integration

package tests

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// replyLoss is an HTTP proxy in front of DynamoDB Local. It forwards every
// request; for the writes it is told to lose, it lets DynamoDB Local apply
// the write, reads the reply and throws it away, resetting the client's
// connection instead: a write saved whose reply was lost on the way back,
// which the SDK then retries.
type replyLoss struct {
	srv    *httptest.Server
	target string
	client *http.Client

	mu    sync.Mutex
	rules []*lossRule
	// throttleEvery > 0 refuses every throttleEvery-th request of each
	// operation (not lost, not applied) as DynamoDB does when it throttles:
	// ThrottlingException, or for a transaction a
	// TransactionCanceledException whose reasons say ThrottlingError.
	// Counting per operation makes every kind of request meet it, however
	// concurrent requests interleave.
	throttleEvery, throttled int
	requests, throttledOps   map[string]int
}

// lossRule loses the replies of the next `times` requests of operation op
// whose body contains `contains`.
type lossRule struct {
	op, contains string
	times, lost  int
}

func newReplyLoss(t *testing.T, targetURL string) *replyLoss {
	t.Helper()
	p := &replyLoss{target: strings.TrimRight(targetURL, "/"),
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// Endpoint is the proxy's URL, to give an SDK client.
func (p *replyLoss) Endpoint() string { return p.srv.URL }

// Lose arms a rule: the replies of the next `times` op requests containing
// `contains` are lost after DynamoDB Local applied them.
func (p *replyLoss) Lose(op, contains string, times int) *lossRule {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &lossRule{op: op, contains: contains, times: times}
	p.rules = append(p.rules, r)
	return r
}

// Lost is how many replies the rule has thrown away.
func (p *replyLoss) Lost(r *lossRule) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.lost
}

func (p *replyLoss) lose(op string, body []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if r.op == op && r.lost < r.times && bytes.Contains(body, []byte(r.contains)) {
			r.lost++
			return true
		}
	}
	return false
}

// Throttle refuses every n-th request from now on (0 stops it).
func (p *replyLoss) Throttle(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.throttleEvery, p.requests = n, map[string]int{}
}

// Throttled is how many requests were refused.
func (p *replyLoss) Throttled() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.throttled
}

// ThrottledOps counts the refused requests by operation.
func (p *replyLoss) ThrottledOps() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.throttledOps)
}

func (p *replyLoss) throttle(op string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.throttleEvery == 0 {
		return false
	}
	p.requests[op]++
	if p.requests[op]%p.throttleEvery == 0 {
		if p.throttledOps == nil {
			p.throttledOps = map[string]int{}
		}
		p.throttled++
		p.throttledOps[op]++
		return true
	}
	return false
}

// writeThrottled answers as DynamoDB does when it throttles a request: a
// transaction is cancelled with a ThrottlingError reason on its first item
// (and None on the others), anything else is a ThrottlingException.
func writeThrottled(w http.ResponseWriter, op string, body []byte) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	if op != "TransactWriteItems" {
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Throughput exceeds the current capacity of your table or index."}`))
		return
	}
	var in struct{ TransactItems []json.RawMessage }
	_ = json.Unmarshal(body, &in)
	reasons := make([]map[string]string, len(in.TransactItems))
	codes := make([]string, len(reasons))
	for i := range reasons {
		reasons[i], codes[i] = map[string]string{"Code": "None"}, "None"
	}
	if len(reasons) > 0 {
		reasons[0], codes[0] = map[string]string{"Code": "ThrottlingError", "Message": "Throughput exceeds the current capacity of your table or index."}, "ThrottlingError"
	}
	doc, _ := json.Marshal(map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"Message": "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]", "CancellationReasons": reasons})
	_, _ = w.Write(doc)
}

func (p *replyLoss) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	if p.throttle(op) {
		writeThrottled(w, op, body)
		return
	}
	lose := p.lose(op, body)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header, out.Host = r.Header.Clone(), r.Host
	resp, err := p.client.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	reply, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if lose {
		// DynamoDB Local has applied the write; the client never hears.
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
		}
		return
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(reply)
}
