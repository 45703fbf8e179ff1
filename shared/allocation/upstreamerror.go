package allocation

import (
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
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
	// Scheduling and Dedicated are the request's: an upstream that keeps
	// rooms (Upstream.KeepsRooms) packs or spreads its sessions by
	// Scheduling, and gives a Dedicated request a server of its own.
	Scheduling gameinstance.Scheduling
	Dedicated  bool
}

// Allocated is a server an upstream handed out.
type Allocated struct {
	Server *gameinstance.Server
	// Room: the upstream placed the instance on a server that already
	// hosts others (an Agones rooms Counter above 1 after the allocation).
	Room bool
	// GameServerName and NodeName are the upstream's names for the server
	// and its node (Agones), kept in the attempt.
	GameServerName, NodeName string
}

// UpstreamKind classifies a failed upstream call for the retry, fallback
// and error-code decisions.
type UpstreamKind int

const (
	UpstreamStatus    UpstreamKind = iota + 1 // it answered non-2xx
	UpstreamTimeout                           // no answer in time
	UpstreamTransport                         // connection refused, reset, DNS, TLS ...
	UpstreamDecode                            // a 2xx that is not a usable server
	// UpstreamNoCapacity: the upstream said it has no server for the
	// request (an Agones allocator's unallocated answer), whatever its
	// status: a lack of capacity, never a rate limit or a region fault.
	UpstreamNoCapacity
	// UpstreamContention: the upstream lost a race for a server (an Agones
	// allocator's 409 Aborted); asking again shortly may succeed.
	UpstreamContention
	// UpstreamRefused: the upstream refused our credentials, or we refused
	// its certificate (an Agones allocator's 401, 403 or TLS handshake
	// refusal): not retried, not a region fault, nothing allocated.
	UpstreamRefused
	// UpstreamInvalid: a 2xx that is not an allocation, from an upstream
	// whose failure code names it (UPSTREAM_INVALID_RESPONSE: Agones).
	UpstreamInvalid
	// UpstreamFailed: the upstream answered an error that is neither a
	// lack of capacity nor a rate limit, whatever its status (an Agones
	// allocator's 4xx and 5xx other than the kinds above; GameFabric's
	// statuses are UpstreamStatus, classified by their number).
	UpstreamFailed
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
