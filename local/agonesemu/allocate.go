package agonesemu

import (
	"cmp"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/agones"
)

// Agones' own texts.
const (
	MsgUnallocated = "there is no available GameServer to allocate"
	MsgContention  = "too many concurrent requests have overwhelmed the system"
)

// Answer is one scripted answer, taken before any GameServer is looked
// for. The zero value allocates as usual.
type Answer struct {
	Status  int    // answer this status with grpc-gateway's error body
	Message string // its message
	RawBody string // answer 200 with this body verbatim, allocating nothing
	// Delay waits before answering; longer than the client waits, it is an
	// answer that never comes (at most MaxStall).
	Delay time.Duration
	// LoseAnswer allocates as usual (the GameServer is Allocated and
	// annotated), then resets the connection before any answer.
	LoseAnswer bool
}

// MaxStall bounds a Delay, so a client that never gives up cannot hold the
// service (and its Close) for ever.
const MaxStall = 10 * time.Second

// Queue appends one-shot answers, used in order.
func (a *Allocator) Queue(as ...Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.script = append(a.script, as...)
}

// Always sets the answer once the queue is empty; nil allocates as usual.
func (a *Allocator) Always(ans *Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sticky = ans
}

func (a *Allocator) next() Answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.script) > 0 {
		ans := a.script[0]
		a.script = a.script[1:]
		return ans
	}
	if a.sticky != nil {
		return *a.sticky
	}
	return Answer{}
}

var discardLog = log.New(io.Discard, "", 0)

func (a *Allocator) handleAllocate(w http.ResponseWriter, r *http.Request) {
	var req agones.AllocationRequest
	if err := decode(r, &req); err != nil {
		writeStatus(w, http.StatusBadRequest, err.Error())
		return
	}
	i := a.record(Call{Request: req})
	ans := a.next()
	select {
	case <-time.After(min(ans.Delay, MaxStall)):
	case <-r.Context().Done():
		return
	}
	switch {
	case ans.Status != 0:
		writeStatus(w, a.answered(i, ans.Status, ""), ans.Message)
	case ans.RawBody != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.answered(i, http.StatusOK, ""))
		_, _ = io.WriteString(w, ans.RawBody)
	default:
		a.serve(w, i, req, ans.LoseAnswer)
	}
}

// serve answers call i from the GameServers, or loses the answer.
func (a *Allocator) serve(w http.ResponseWriter, i int, req agones.AllocationRequest, lose bool) {
	resp, ok := a.allocate(req)
	switch {
	case !ok:
		writeStatus(w, a.answered(i, a.cfg.UnallocatedStatus, ""), MsgUnallocated)
	case lose:
		a.answered(i, 0, resp.GameServerName)
		reset(w)
	default:
		writeJSON(w, a.answered(i, http.StatusOK, resp.GameServerName), resp)
	}
}

// decode reads the request strictly and checks its enums and amounts, as
// the gateway and the GameServerAllocation's validation do.
func decode(r *http.Request, req *agones.AllocationRequest) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		return errors.New("invalid AllocationRequest: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	req.Namespace = cmp.Or(req.Namespace, "default")
	bad := func(v string, ok ...string) bool { return v != "" && !slices.Contains(ok, v) }
	invalid := bad(req.Scheduling, agones.SchedulingPacked, agones.SchedulingSpread)
	for _, s := range req.GameServerSelectors {
		invalid = invalid || bad(s.GameServerState, agones.StateReady, agones.StateAllocated)
	}
	for _, p := range req.Priorities {
		invalid = invalid || bad(p.Type, agones.PriorityCounter) || bad(p.Order, agones.OrderAscending, agones.OrderDescending)
	}
	for _, c := range req.Counters {
		invalid = invalid || bad(c.Action, agones.ActionIncrement, "Decrement") || c.Amount != nil && *c.Amount < 0 || c.Capacity != nil && *c.Capacity < 0
	}
	if invalid {
		return errors.New("invalid AllocationRequest: an enum allocation.proto does not name, or a negative amount or capacity")
	}
	return nil
}

// allocate picks, patches and answers a GameServer under the lock, so two
// allocations never take the same one (Agones' contention is scripted).
func (a *Allocator) allocate(req agones.AllocationRequest) (answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	gs := a.pick(req)
	if gs == nil {
		return answer{}, false
	}
	if req.Metadata != nil {
		maps.Copy(gs.Labels, req.Metadata.Labels)
		maps.Copy(gs.Annotations, req.Metadata.Annotations)
	}
	gs.Annotations["agones.dev/last-allocated"] = time.Now().UTC().Format(time.RFC3339Nano)
	gs.State = StateAllocated
	for name, act := range req.Counters {
		c, ok := gs.Counters[name]
		if !ok {
			continue // Agones records a warning event and allocates anyway
		}
		if act.Capacity != nil {
			c.Capacity = int64(*act.Capacity)
		}
		if act.Amount != nil && act.Action != "" {
			step := int64(*act.Amount)
			if act.Action != agones.ActionIncrement {
				step = -step
			}
			c.Count += step
		}
		c.Count = max(0, min(c.Count, c.Capacity))
		gs.Counters[name] = c
	}
	return response(gs), true
}

// pick is find.go's: each selector's first match in the sorted list, the
// earliest selector's winning.
func (a *Allocator) pick(req agones.AllocationRequest) *GameServer {
	var list []*GameServer
	for _, gs := range a.servers {
		if gs.Namespace == req.Namespace {
			list = append(list, gs)
		}
	}
	packed := req.Scheduling != agones.SchedulingSpread
	rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	slices.SortStableFunc(list, func(x, y *GameServer) int {
		if packed && x.State != y.State {
			return boolOrder(x.State == StateAllocated)
		}
		if c := comparePriorities(req.Priorities, x, y); c != 0 || !packed && len(req.Priorities) == 0 {
			return c // Distributed without priorities stays shuffled
		}
		return strings.Compare(x.Name, y.Name)
	})
	for _, sel := range req.GameServerSelectors {
		for _, gs := range list {
			if matches(sel, gs) {
				return gs
			}
		}
	}
	return nil
}

// boolOrder sorts true first.
func boolOrder(first bool) int { return map[bool]int{true: -1, false: 1}[first] }

// comparePriorities orders by each Counter's available capacity, least
// first (Ascending) or most (Descending); a GameServer with the Counter
// comes before one without.
func comparePriorities(ps []agones.Priority, x, y *GameServer) int {
	for _, p := range ps {
		cx, okx := x.Counters[p.Key]
		cy, oky := y.Counters[p.Key]
		switch {
		case okx != oky:
			return boolOrder(okx)
		case !okx:
			continue
		}
		d := (cx.Capacity - cx.Count) - (cy.Capacity - cy.Count)
		if p.Order == agones.OrderDescending {
			d = -d
		}
		if d != 0 {
			return int(max(-1, min(d, 1)))
		}
	}
	return 0
}

func matches(sel agones.GameServerSelector, gs *GameServer) bool {
	want := map[string]string{"": StateReady, agones.StateReady: StateReady, agones.StateAllocated: StateAllocated}[sel.GameServerState]
	if gs.State != want {
		return false
	}
	for k, v := range sel.MatchLabels {
		if got, ok := gs.Labels[k]; !ok || got != v {
			return false
		}
	}
	for name, cs := range sel.Counters {
		c, ok := gs.Counters[name]
		if !ok || c.Capacity-c.Count < int64(cs.MinAvailable) {
			return false
		}
	}
	return true
}

// port is a GameServerStatusPort as the gateways write it: an int32, a
// JSON number (agones.Port writes a string, and reads either).
type port struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

func portsOf(gs *GameServer) []port {
	out := []port{}
	for _, p := range gs.Ports {
		out = append(out, port{p.Name, int32(p.Port)})
	}
	return out
}

// answer is the AllocationResponse as the gateway writes it.
type answer struct {
	agones.AllocationResponse
	Ports []port `json:"ports"` // shadows the embedded ports
}

// response is gs as the gateway writes the answer, every member present.
func response(gs *GameServer) answer {
	counters := map[string]agones.CounterStatus{}
	for name, c := range gs.Counters {
		counters[name] = agones.CounterStatus{Count: agones.I64(c.Count), Capacity: agones.I64(c.Capacity)}
	}
	return answer{Ports: portsOf(gs), AllocationResponse: agones.AllocationResponse{GameServerName: gs.Name, Address: gs.Address,
		Addresses: []agones.Address{{Type: agones.AddressExternalIP, Address: gs.Address}}, NodeName: gs.NodeName, Source: "local",
		Metadata: &agones.GameServerMetadata{Labels: cloneOr(gs.Labels), Annotations: cloneOr(gs.Annotations)}, Counters: counters}}
}

// reset closes the connection with a TCP RST before any answer: the
// client sent its request and hears nothing back.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic("agonesemu: cannot hijack to reset the connection: " + err.Error())
	}
	raw := conn
	if tc, ok := conn.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = raw.Close()
}

func (a *Allocator) record(c Call) int {
	c.At = time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, c)
	return len(a.calls) - 1
}

// answered logs how call i is answered, just before it is, and returns
// the status.
func (a *Allocator) answered(i, status int, gameServer string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[i].Answered, a.calls[i].GameServer = status, gameServer
	return status
}
