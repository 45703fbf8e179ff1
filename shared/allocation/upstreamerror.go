package allocation

import (
	"fmt"
	"time"
)

// UpstreamRequest is what an upstream is asked for, in the domain's terms:
// a server in a region, for a game server version's attributes, with the
// payload the game server receives.
type UpstreamRequest struct {
	// Region is the region string the upstream knows (Upstream.Region).
	Region      string
	Environment string
	ArmadaSet   string
	Payload     Payload
}

// UpstreamKind classifies a failed upstream call for the retry, fallback
// and error-code decisions.
type UpstreamKind int

const (
	UpstreamStatus    UpstreamKind = iota + 1 // it answered non-2xx
	UpstreamTimeout                           // no answer in time
	UpstreamTransport                         // connection refused, reset, DNS, TLS ...
	UpstreamDecode                            // a 2xx that is not a usable server
)

// UpstreamError is every failure an upstream port returns. Its texts are
// already bounded and free of credentials.
type UpstreamError struct {
	Kind       UpstreamKind
	Status     int    // the HTTP status; 0 when there was no answer
	Message    string // what it said, or what went wrong
	Body       string // a bounded head of its answer, for diagnosis
	RetryAfter time.Duration
	// MayHaveAllocated: no usable answer proves that nothing was
	// allocated (a timeout, a 504, an answer cut short): a suspected orphan.
	MayHaveAllocated bool
	Err              error
}

func (e *UpstreamError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("allocator answered %d: %s", e.Status, e.Message)
	}
	return e.Message
}

func (e *UpstreamError) Unwrap() error { return e.Err }
