package allocation

import (
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// What one outcome keeps of GameFabric's words. Each error text and body is
// already bounded by the gamefabric client; these bound them in all, so the
// record stays far below DynamoDB's 400 KB item limit and the answer far
// below 64 KB however many attempts the plan made (at most 10 regions, each
// with its 429 retries and one token refresh).
const (
	maxAttemptDetail = 8 << 10 // error texts and bodies of all attempts together
	clippedError     = 64      // what an error text keeps once the total is over
	// maxKeptAttempts bounds their number: a queued placement adds a run's
	// attempts every few seconds for up to 10 minutes. The latest are kept;
	// one synchronous plan (10 regions, their retries) never reaches it.
	maxKeptAttempts = 48
)

// boundAttempts keeps the attempts' details within maxAttemptDetail: the
// earlier attempts lose their bodies first, then their error texts are
// clipped; the last attempt, which decided the outcome, keeps its details
// unless that is still not enough.
func boundAttempts(attempts []gameinstance.Attempt) []gameinstance.Attempt {
	out := append([]gameinstance.Attempt(nil), attempts[max(0, len(attempts)-maxKeptAttempts):]...)
	total := 0
	for _, a := range out {
		total += len(a.Error) + len(a.Body)
	}
	shrink := func(a *gameinstance.Attempt) {
		if total > maxAttemptDetail {
			total -= len(a.Body)
			a.Body = ""
		}
	}
	clipError := func(a *gameinstance.Attempt) {
		if total > maxAttemptDetail {
			clipped := gameinstance.Clip(a.Error, clippedError)
			total -= len(a.Error) - len(clipped)
			a.Error = clipped
		}
	}
	for _, step := range []func(*gameinstance.Attempt){shrink, clipError} {
		for i := 0; i < len(out)-1; i++ {
			step(&out[i])
		}
	}
	if n := len(out); n > 0 {
		shrink(&out[n-1])
		clipError(&out[n-1])
	}
	return out
}

// withoutDetails keeps only where each attempt went and what it got.
func withoutDetails(attempts []gameinstance.Attempt) []gameinstance.Attempt {
	out := append([]gameinstance.Attempt(nil), attempts...)
	for i := range out {
		out[i].Error, out[i].Body = "", ""
	}
	return out
}
