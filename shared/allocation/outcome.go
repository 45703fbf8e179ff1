package allocation

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// attempt is one upstream call as the plan sees it: what is recorded, and
// how it counts for the fallback and error-code decisions.
type attempt struct {
	gameinstance.Attempt
	outcome    outcome
	retryAfter time.Duration // the allocator's Retry-After
	kind       UpstreamKind  // how the call failed; 0 when it did not
}

// after is what a record keeps of its attempts after run: those before
// it (a queued placement's earlier runs) and run's, bounded.
func (run planRun) after(prior []gameinstance.Attempt) []gameinstance.Attempt {
	return boundAttempts(slices.Concat(prior, recorded(run.attempts)))
}

// recorded is what the record keeps of attempts.
func recorded(attempts []attempt) []gameinstance.Attempt {
	out := make([]gameinstance.Attempt, len(attempts))
	for i, a := range attempts {
		out[i] = a.Attempt
	}
	return out
}

// outcome classifies one attempt for the fallback and error-code decisions.
type outcome int

const (
	outcomeOK          outcome = iota + 1
	outcomeCapacity            // 404, 409, 503: no server right now
	outcomeRateLimited         // 429: the Allocator's rate limit, not a lack of servers
	outcomeTimeout             // no answer in time, or a 504 from the allocator's gateway
	outcomeFailed              // anything else: auth, 5xx, bad body, transport
	outcomeSkipped             // not tried: the breaker skipped it, or no time was left
	// outcomeRateLimitSkipped: not tried, its Allocator had rate-limited
	// this allocation in another region.
	outcomeRateLimitSkipped
	outcomeNoToken // not tried: its Allocator's token could not be read
	// outcomeRoom: a session callback to a game server with a free room.
	// It says nothing of the region's Allocator, so it counts neither for
	// the error code nor for region health.
	outcomeRoom
	// outcomeInvalid: a 2xx that is not an allocation, from an upstream
	// that names it (UpstreamInvalid).
	outcomeInvalid
)

// maxErrorText bounds an error text of ours that quotes another error.
const maxErrorText = 256

func classifyError(err error) outcome {
	var up *UpstreamError
	if !errors.As(err, &up) {
		return outcomeFailed
	}
	switch up.Kind {
	case UpstreamTimeout:
		return outcomeTimeout
	case UpstreamNoCapacity, UpstreamContention:
		return outcomeCapacity
	case UpstreamInvalid:
		return outcomeInvalid
	case UpstreamFailed, UpstreamRefused:
		return outcomeFailed
	case UpstreamStatus:
		switch up.Status {
		case http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable:
			return outcomeCapacity
		case http.StatusTooManyRequests:
			return outcomeRateLimited
		case http.StatusGatewayTimeout:
			// A gateway in front of the allocator gave up waiting for it: a
			// timeout like our own, not a rejection.
			return outcomeTimeout
		}
	}
	return outcomeFailed
}

// failureCode turns the attempts of a failed allocation into the public
// code. Each region counts by its last answer (a 429 retried into a 503 is
// a 503; a 401 cured by a fresh token is what came next): NO_CAPACITY when
// every region asked had no capacity; RATE_LIMITED when the rest were
// rate-limited, since asking again later may reach a server; UPSTREAM_TIMEOUT
// when the others timed out (or nothing could be tried in time);
// UPSTREAM_INVALID_RESPONSE when an Agones allocator's unusable answer is
// all that was not a lack of capacity or a rate limit; ALLOCATION_FAILED
// otherwise.
func failureCode(attempts []attempt) gameinstance.Code {
	last := map[string]outcome{}
	var order []string
	for _, a := range attempts {
		if a.outcome == outcomeRoom {
			continue // a game server's callback, not the region's Allocator
		}
		prev, seen := last[a.Region]
		if !seen {
			order = append(order, a.Region)
		}
		// "no time left" after an answer does not replace the answer.
		if a.outcome != outcomeSkipped || !seen || prev == outcomeSkipped {
			last[a.Region] = a.outcome
		}
	}
	var tried, capacity, limited, timeouts, invalid int
	for _, region := range order {
		switch last[region] {
		case outcomeSkipped:
			continue
		case outcomeCapacity:
			capacity++
		case outcomeRateLimited, outcomeRateLimitSkipped:
			limited++
		case outcomeTimeout:
			timeouts++
		case outcomeInvalid:
			invalid++
		}
		tried++
	}
	switch {
	case tried == 0:
		return gameinstance.CodeUpstreamTimeout
	case capacity == tried:
		return gameinstance.CodeNoCapacity
	case timeouts == 0 && capacity+limited == tried:
		return gameinstance.CodeRateLimited
	case invalid > 0 && invalid+capacity+limited == tried:
		return gameinstance.CodeUpstreamInvalidResponse
	case timeouts > 0 && timeouts+capacity+limited == tried:
		return gameinstance.CodeUpstreamTimeout
	default:
		return gameinstance.CodeAllocationFailed
	}
}

// failureOf is the error a Failed outcome answers, with the Retry-After
// its code carries.
func failureOf(rec gameinstance.Record, attempts []attempt) *gameinstance.Error {
	return &gameinstance.Error{Code: rec.Failure.Code, Message: rec.Failure.Message, Attempts: rec.Attempts,
		RetryAfter: retryAfterFor(rec.Failure.Code, attempts)}
}

// How long a caller should wait before retrying the same gameInstanceId
// after a failure GameFabric may get over: its own Retry-After when it sent
// one with a lack of capacity or a rate limit (the longest, capped), else
// a default per code.
var defaultRetryAfter = map[gameinstance.Code]time.Duration{
	gameinstance.CodeNoCapacity:      5 * time.Second,
	gameinstance.CodeRateLimited:     2 * time.Second,
	gameinstance.CodeUpstreamTimeout: 2 * time.Second,
}

const maxRetryAfter = time.Minute

func retryAfterFor(code gameinstance.Code, attempts []attempt) time.Duration {
	wait, ok := defaultRetryAfter[code]
	if !ok {
		return 0
	}
	if upstream := longestRetryAfter(attempts); upstream > 0 && code != gameinstance.CodeUpstreamTimeout {
		wait = upstream
	}
	return min(gameinstance.WholeSeconds(wait), maxRetryAfter)
}

func longestRetryAfter(attempts []attempt) time.Duration {
	var longest time.Duration
	for _, a := range attempts {
		longest = max(longest, a.retryAfter)
	}
	return longest
}

// failureMessage says why the allocation failed, naming the upstreams its
// attempts asked: GameFabric, Agones, or both.
func failureMessage(code gameinstance.Code, attempts []attempt) string {
	switch code {
	case gameinstance.CodeNoCapacity:
		return "no game server available in any region tried"
	case gameinstance.CodeRateLimited:
		return "GameFabric's Allocators rate-limited this allocation; retry after Retry-After"
	case gameinstance.CodeUpstreamTimeout:
		return upstreamsOf(attempts) + " did not answer in time"
	case gameinstance.CodeUpstreamInvalidResponse:
		return "an Agones allocator answered with something that is not an allocation; see the attempts"
	case gameinstance.CodePlacementTimedOut:
		return "no game server was found before the placement's queueTimeoutSeconds ran out"
	default:
		return upstreamsOf(attempts) + " rejected or failed every allocation attempt"
	}
}

// upstreamsOf names the kinds of Allocator attempts asked.
func upstreamsOf(attempts []attempt) string {
	kinds := map[gameinstance.AllocatorKind]bool{}
	for _, a := range attempts {
		kinds[a.AllocatorKind] = true
	}
	switch {
	case kinds[gameinstance.AllocatorAgones] && kinds[gameinstance.AllocatorGameFabric]:
		return "GameFabric and Agones"
	case kinds[gameinstance.AllocatorAgones]:
		return "Agones"
	}
	return "GameFabric"
}

// RetryPolicy bounds same-region retries after a 429.
type RetryPolicy struct {
	// Max429Retries is how many times a region answering 429 is asked again.
	Max429Retries int
	// BaseBackoff doubles per retry when the allocator sends no Retry-After.
	BaseBackoff time.Duration
	// MaxWait caps one wait; a longer Retry-After moves on to the next
	// region behind another Allocator.
	MaxWait time.Duration
	// MaxContentionRetries is how many times a region answering with
	// contention (an Agones allocator's 409) is asked again, after
	// ContentionBackoff doubled per retry with up to as much again of
	// jitter, so racing callers do not collide again in step.
	MaxContentionRetries int
	ContentionBackoff    time.Duration
}

// waitContended is how long to wait before asking a region again after
// its retry-th contention answer, and whether to ask again at all.
func (p RetryPolicy) waitContended(retry int, remaining time.Duration) (time.Duration, bool) {
	if retry >= p.MaxContentionRetries {
		return 0, false
	}
	base := p.ContentionBackoff << retry
	wait := base + rand.N(base+1)
	return wait, wait < remaining
}

// DefaultRetryPolicy is used when the service is given none.
var DefaultRetryPolicy = RetryPolicy{Max429Retries: 2, BaseBackoff: 100 * time.Millisecond, MaxWait: 2 * time.Second,
	MaxContentionRetries: 2, ContentionBackoff: 25 * time.Millisecond}

// wait429 is how long to wait before asking a region again after its
// retry-th 429, and whether to ask again at all.
func (p RetryPolicy) wait429(retry int, retryAfter, remaining time.Duration) (time.Duration, bool) {
	if retry >= p.Max429Retries {
		return 0, false
	}
	wait := retryAfter
	if wait <= 0 {
		wait = p.BaseBackoff << retry
	}
	if wait > p.MaxWait || wait >= remaining {
		return 0, false
	}
	return wait, true
}
