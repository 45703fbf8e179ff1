package gfemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

func (e *Emulator) handleAllocate(w http.ResponseWriter, r *http.Request) {
	token, ok := authorize(w, r, e.allocTokens, "allocator")
	if !ok {
		e.record(Call{Token: token, Answered: http.StatusUnauthorized})
		return
	}
	if e.limiter != nil && !e.limiter.AllowN(e.now(), 1) {
		e.record(Call{Token: token, Answered: http.StatusTooManyRequests})
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter()))
		writeError(w, http.StatusTooManyRequests, "rate limit exceeded")
		return
	}
	// The payload is kept verbatim for the callback: decoding into the
	// pointer the client's interface field holds fills it as it is.
	var payload json.RawMessage
	req := gamefabric.AllocateRequest{Payload: &payload}
	err := decodeJSON(w, r, &req, false)
	if err == nil && req.Region == "" {
		err = errors.New("region is required")
	}
	if err != nil {
		e.record(Call{Token: token, Answered: http.StatusBadRequest})
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	var object map[string]any
	_ = json.Unmarshal(payload, &object) // only an object is logged
	// The call is recorded before it is answered, and its answer before
	// that is sent: whoever reads the log after the answer finds both.
	i := e.record(Call{Region: req.Region, Attributes: req.Attributes, Payload: object, Token: token})
	if a, ok := e.scripted(req.Region); ok {
		e.answerScripted(w, r, a, object, i)
		return
	}
	e.allocate(w, r, req.Region, req.Attributes, payload, i)
}

// record logs c as it arrives and returns its index.
func (e *Emulator) record(c Call) int {
	c.At = time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, c)
	return len(e.calls) - 1
}

// answered logs how call i is answered in full, just before it is.
func (e *Emulator) answered(i, status int, server string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls[i].Answered, e.calls[i].Server = status, server
}

// allocate answers call i with the best registered match, calling its
// callback.
func (e *Emulator) allocate(w http.ResponseWriter, r *http.Request, region string, attrs map[string]string, payload json.RawMessage, i int) {
	if e.answerDrained(w, region, attrs, i) {
		return
	}
	failed := 0
	for r.Context().Err() == nil {
		s, ok := e.take(region, attrs)
		if !ok {
			break
		}
		answer, err := e.notify(r.Context(), s, payload)
		if err != nil {
			failed++
			continue
		}
		e.answered(i, http.StatusOK, s.Address)
		writeJSON(w, http.StatusOK, responseFor(s, answer))
		return
	}
	if r.Context().Err() != nil {
		// The caller is gone; nobody reads this, but the status shows in logs.
		writeError(w, http.StatusServiceUnavailable, "allocate request cancelled")
		return
	}
	e.answered(i, http.StatusNotFound, "")
	writeError(w, http.StatusNotFound, noServerMessage(region, attrs, failed))
}

// take removes the best match from the registry under the lock, so two
// concurrent allocations can never be handed the same server.
func (e *Emulator) take(region string, attrs map[string]string) (Server, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	candidates := Match(e.snapshotLocked(), region, attrs)
	if len(candidates) == 0 {
		return Server{}, false
	}
	delete(e.servers, candidates[0].Address)
	return candidates[0], true
}

func responseFor(s Server, answer json.RawMessage) gamefabric.Allocation {
	ip, _, _ := net.SplitHostPort(s.Address) // validated at registration
	a := gamefabric.Allocation{Address: s.Address, IP: ip, Ports: s.Ports, Payload: answer}
	if s.Ports == nil {
		a.Ports = map[string]int{}
	}
	if len(answer) == 0 {
		a.Payload = json.RawMessage("null")
	}
	if s.Callback != nil {
		a.Token = s.Callback.Token
	}
	return a
}

func noServerMessage(region string, attrs map[string]string, failed int) string {
	pairs := make([]string, 0, len(attrs))
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		pairs = append(pairs, k+"="+attrs[k])
	}
	msg := fmt.Sprintf("no game server available in region %s matching attributes {%s}", region, strings.Join(pairs, ", "))
	if failed > 0 {
		msg += fmt.Sprintf(" (%d failed their allocation callback and were dropped)", failed)
	}
	return msg
}

// retryAfter is when the limiter will next admit a call, in whole seconds
// (at least 1): an honest Retry-After lets a client that waits for it in.
func (e *Emulator) retryAfter() int {
	now := e.now()
	r := e.limiter.ReserveN(now, 1)
	defer r.CancelAt(now)
	return max(1, int(math.Ceil(r.DelayFrom(now).Seconds())))
}
