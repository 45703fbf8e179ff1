package gfemu

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/local/gfproto"
)

func (e *Emulator) handleAllocate(w http.ResponseWriter, r *http.Request) {
	if !gfproto.Authorize(w, r, e.allocTokens, "allocator") {
		return
	}
	if e.limiter != nil && !e.limiter.AllowN(e.now(), 1) {
		gfproto.WriteRateLimited(w, strconv.Itoa(e.retryAfter()))
		return
	}
	var req gfproto.AllocateRequest
	if err := gfproto.DecodeJSON(w, r, &req, false); err != nil {
		gfproto.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.Region == "" {
		gfproto.WriteError(w, http.StatusBadRequest, "region is required")
		return
	}
	if e.answerDrained(w, req.Region, req.Attributes) {
		return
	}
	payload := req.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}

	failed := 0
	for r.Context().Err() == nil {
		s, ok := e.take(req.Region, req.Attributes)
		if !ok {
			break
		}
		answer, err := e.notify(r.Context(), s, payload)
		if err != nil {
			failed++
			e.log.Warn("allocation callback failed; dropping game server", "address", s.Address, "error", err)
			continue
		}
		e.mu.Lock()
		e.allocations = append(e.allocations, Allocation{
			Region:  req.Region,
			Address: s.Address,
			Token:   callbackToken(s),
			Payload: slices.Clone(payload),
		})
		e.mu.Unlock()
		e.log.Info("game server allocated", "address", s.Address, "region", req.Region)
		gfproto.WriteJSON(w, http.StatusOK, responseFor(s, answer))
		return
	}
	if r.Context().Err() != nil {
		// The caller is gone; nobody reads this, but the status shows in logs.
		gfproto.WriteError(w, http.StatusServiceUnavailable, "allocate request cancelled")
		return
	}
	gfproto.WriteError(w, http.StatusNotFound, noServerMessage(req.Region, req.Attributes, failed))
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

// notify POSTs the payload to the server's callback and returns the JSON it
// answered (nil when it answered nothing). The call is detached from the
// caller's cancellation: once a server has been taken, its callback is
// completed so the server's state and ours agree.
func (e *Emulator) notify(ctx context.Context, s Server, payload json.RawMessage) (json.RawMessage, error) {
	if s.Callback == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cbTimeout)
	defer cancel()
	return callback(ctx, e.client, *s.Callback, e.cbBearer, payload)
}

func callbackToken(s Server) string {
	if s.Callback == nil {
		return ""
	}
	return s.Callback.Token
}

func responseFor(s Server, answer json.RawMessage) gfproto.AllocateResponse {
	ip, _, _ := net.SplitHostPort(s.Address) // validated at registration
	ports := s.Ports
	if ports == nil {
		ports = map[string]int{}
	}
	if len(answer) == 0 {
		answer = json.RawMessage("null")
	}
	return gfproto.AllocateResponse{Address: s.Address, IP: ip, Ports: ports, Token: callbackToken(s), Payload: answer}
}

func noServerMessage(region string, attrs map[string]string, failed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no game server available in region %s matching attributes {", region)
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%s", k, attrs[k])
	}
	b.WriteString("}")
	if failed > 0 {
		fmt.Fprintf(&b, " (%d failed their allocation callback and were dropped)", failed)
	}
	return b.String()
}

// retryAfter is when the limiter will next admit a call, in whole seconds
// (at least 1): an honest Retry-After lets a client that waits for it in.
func (e *Emulator) retryAfter() int {
	now := e.now()
	r := e.limiter.ReserveN(now, 1)
	defer r.CancelAt(now)
	return max(1, int(math.Ceil(r.DelayFrom(now).Seconds())))
}
