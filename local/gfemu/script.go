package gfemu

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

// Answer is one scripted answer of an Allocator (Queue, Always) or of the
// Ping Service (Script). The zero value is a 200 with an allocation (a ping
// answer for the Ping Service). Besides the documented answers, it may
// fail the way real networks do: a 200 cut short by a connection reset, or
// one whose body never finishes.
type Answer struct {
	Status     int           // 0 means 200 with an allocation
	Error      string        // the {"error"} message for non-2xx
	RawBody    string        // when set, sent verbatim instead
	RetryAfter string        // Retry-After header value
	Delay      time.Duration // wait before answering (client may time out)
	// ResetAfter > 0 sends the status line, the headers (with the whole
	// body's Content-Length) and only this many bytes of the body, then
	// resets the connection (TCP RST): an answer lost mid-body.
	ResetAfter int
	// StallAfter > 0 sends the headers and this many bytes of the body,
	// then nothing more until the client gives up (or MaxStall passes):
	// a body that never finishes.
	StallAfter int
}

// MaxStall bounds a StallAfter answer, so a client that never gives up
// cannot keep the emulator (and its Close) waiting for ever.
const MaxStall = 10 * time.Second

// Call is one allocate request an Allocator received, scripted or not.
type Call struct {
	Region     string
	Attributes map[string]string
	Payload    map[string]any // nil unless the payload is a JSON object
	Token      string         // the caller's bearer token
	// Answered is the status of the answer sent in full; 0 when none was
	// (the client gave up, or the answer was cut short).
	Answered int
	// Server is the address handed out in a complete allocation; empty
	// for errors, raw bodies and answers cut short.
	Server string
	// At is when the call arrived.
	At time.Time
}

// Queue appends one-shot answers for region, used in order before the
// registry is asked.
func (e *Emulator) Queue(region string, as ...Answer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.script[region] = append(e.script[region], as...)
}

// Always sets the answer for region once its queue is empty; a region
// with neither is answered from the registry.
func (e *Emulator) Always(region string, a Answer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sticky[region] = a
}

// scripted takes region's next scripted answer, if it has one.
func (e *Emulator) scripted(region string) (Answer, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if q := e.script[region]; len(q) > 0 {
		e.script[region] = q[1:]
		return q[0], true
	}
	a, ok := e.sticky[region]
	return a, ok
}

// answerScripted answers call i with a. A scripted allocation is made up:
// the next loopback port, and the payload our sample server's callback
// answers (the game instance id it was given).
func (e *Emulator) answerScripted(w http.ResponseWriter, r *http.Request, a Answer, payload map[string]any, i int) {
	if !a.wait(r) {
		return
	}
	body, server := a.body(), ""
	if body == nil {
		e.mu.Lock()
		port := e.nextPort
		e.nextPort++
		e.mu.Unlock()
		server = fmt.Sprintf("127.0.0.1:%d", port)
		accepted, _ := json.Marshal(map[string]any{"accepted": payload["GameInstanceId"]})
		body, _ = json.Marshal(gamefabric.Allocation{Address: server, IP: "127.0.0.1",
			Ports: map[string]int{"game": port}, Token: "callback-" + strconv.Itoa(port), Payload: accepted})
		body = append(body, '\n')
	}
	a.send(w, r, body, func(status int) { e.answered(i, status, server) })
}

// wait sleeps a's delay and reports whether the client is still there.
func (a Answer) wait(r *http.Request) bool {
	if a.Delay <= 0 {
		return true
	}
	select {
	case <-time.After(a.Delay):
		return true
	case <-r.Context().Done():
		return false
	}
}

func (a Answer) status() int {
	if a.Status == 0 {
		return http.StatusOK
	}
	return a.Status
}

// body is a's raw body or error; nil for a 200, whose body is the
// service's own.
func (a Answer) body() []byte {
	switch {
	case a.RawBody != "":
		return []byte(a.RawBody)
	case a.status() != http.StatusOK:
		return errorJSON(a.Error)
	}
	return nil
}

// send writes body as a says, calling full (if not nil) just before an
// answer that is not cut short.
func (a Answer) send(w http.ResponseWriter, r *http.Request, body []byte, full func(status int)) {
	if a.RetryAfter != "" {
		w.Header().Set("Retry-After", a.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case a.ResetAfter > 0:
		resetMidBody(w, a.status(), body[:min(a.ResetAfter, len(body))], len(body))
		return
	case a.StallAfter > 0:
		stall(w, r, a.status(), body[:min(a.StallAfter, len(body))], len(body))
		return
	}
	if full != nil {
		full(a.status())
	}
	w.WriteHeader(a.status())
	_, _ = w.Write(body)
}

// resetMidBody writes the status line, the headers announcing size bytes
// and part of the body on the raw connection, then closes it with
// SO_LINGER 0 so the kernel sends RST: the client has read a 200 and fails
// while reading its body.
func resetMidBody(w http.ResponseWriter, status int, part []byte, size int) {
	w.Header().Set("Content-Length", strconv.Itoa(size))
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic("gfemu: cannot hijack to reset the connection: " + err.Error())
	}
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	_ = w.Header().Write(buf)
	_, _ = buf.WriteString("\r\n")
	_, _ = buf.Write(part)
	_ = buf.Flush()
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// stall sends the headers announcing size bytes and part of the body, then
// holds the connection open until the client goes away or MaxStall passes.
func stall(w http.ResponseWriter, r *http.Request, status int, part []byte, size int) {
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(status)
	_, _ = w.Write(part)
	_ = http.NewResponseController(w).Flush()
	select {
	case <-r.Context().Done():
	case <-time.After(MaxStall):
	}
}
