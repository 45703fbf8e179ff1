// Package gamelift is the local stand-in for the one GameLift operation the
// service calls, DescribeMatchmaking (the players' latencies of a match's
// tickets), speaking what the pinned Go SDK sends since its v1.53: Smithy
// RPC v2 CBOR (POST /service/GameLift/operation/<Operation>, header
// smithy-protocol: rpc-v2-cbor, CBOR bodies both ways). moto has no
// GameLift; this is the one stand-in for it, faithful to AWS's API
// reference for that operation: up to 10 ticket ids, each at most 128
// characters of [a-zA-Z0-9-.], and a ticket for each id that exists (the
// others are left out, not an error).
package gamelift

import (
	"io"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Player is a matchmaking ticket's player: its team and its latency to
// each region, as the game client reported it (LatencyInMs).
type Player struct {
	PlayerID    string
	Team        string
	LatencyInMs map[string]int
}

// Ticket is a matchmaking ticket as DescribeMatchmaking returns it.
type Ticket struct {
	TicketID          string
	ConfigurationName string
	ConfigurationArn  string
	Status            string // COMPLETED once its match succeeded
	StartTime         time.Time
	Players           []Player
}

// Fault is a scripted error answer: the HTTP status and the error's
// __type, as GameLift answers it (e.g. 400 InvalidRequestException, 500
// InternalServiceException, 400 ThrottlingException).
type Fault struct {
	Status  int
	Type    string
	Message string
}

// Operation is the path the SDK posts DescribeMatchmaking to.
const Operation = "/service/GameLift/operation/DescribeMatchmaking"

const (
	maxTicketIDs  = 10
	maxTicketID   = 128
	maxBodyBytes  = 64 << 10
	protocol      = "rpc-v2-cbor"
	protocolHead  = "Smithy-Protocol"
	cborMediaType = "application/cbor"
)

var ticketIDPattern = regexp.MustCompile(`^[a-zA-Z0-9\-.]*$`)

// StandIn serves DescribeMatchmaking from the tickets it was given.
type StandIn struct {
	mu      sync.Mutex
	tickets map[string]Ticket
	faults  []Fault
	delay   time.Duration
	calls   [][]string
}

// New is an empty stand-in: every ticket id is unknown.
func New() *StandIn { return &StandIn{tickets: map[string]Ticket{}} }

// Put adds or replaces tickets.
func (s *StandIn) Put(tickets ...Ticket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tickets {
		s.tickets[t.TicketID] = t
	}
}

// Fail answers the next calls with faults, one each, in order.
func (s *StandIn) Fail(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Delay makes every answer wait d (a slow GameLift).
func (s *StandIn) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Calls are the ticket ids of each well-formed call, in order.
func (s *StandIn) Calls() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// ServeHTTP answers DescribeMatchmaking; any other operation is unknown.
func (s *StandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != Operation {
		writeError(w, Fault{Status: http.StatusNotFound, Type: "UnknownOperationException", Message: "the stand-in serves DescribeMatchmaking only"})
		return
	}
	if r.Header.Get(protocolHead) != protocol {
		writeError(w, Fault{Status: http.StatusBadRequest, Type: "InvalidRequestException", Message: "smithy-protocol must be " + protocol})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil || len(body) > maxBodyBytes {
		writeError(w, Fault{Status: http.StatusBadRequest, Type: "InvalidRequestException", Message: "the request body is unreadable or too large"})
		return
	}
	ids, problem := ticketIDs(body)
	if problem != "" {
		writeError(w, Fault{Status: http.StatusBadRequest, Type: "InvalidRequestException", Message: problem})
		return
	}
	found, fault, delay := s.describe(ids)
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	if fault != nil {
		writeError(w, *fault)
		return
	}
	writeCBOR(w, http.StatusOK, describeOutput(found))
}

// describe records the call and takes its answer: the next scripted fault,
// or the tickets that exist, in the order asked.
func (s *StandIn) describe(ids []string) ([]Ticket, *Fault, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, ids)
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		return nil, &f, s.delay
	}
	var found []Ticket
	for _, id := range ids {
		if t, ok := s.tickets[id]; ok {
			found = append(found, t)
		}
	}
	return found, nil, s.delay
}
