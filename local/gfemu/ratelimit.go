package gfemu

import (
	"sync"
	"time"
)

// bucket is a token bucket on the injected clock, so tests can refill it
// by moving time instead of sleeping.
type bucket struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newBucket(qps float64, burst int, now func() time.Time) *bucket {
	return &bucket{rate: qps, burst: float64(burst), now: now, tokens: float64(burst), last: now()}
}

// allow takes one token if there is one.
func (b *bucket) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	// A clock that steps back must not mint tokens or lock the bucket.
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(b.burst, b.tokens+elapsed.Seconds()*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
