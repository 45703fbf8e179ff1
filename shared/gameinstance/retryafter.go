package gameinstance

import (
	"math"
	"time"
)

// SecondsUntil is a Retry-After until t: whole seconds, rounded up, at least one.
func SecondsUntil(t, now time.Time) time.Duration { return WholeSeconds(t.Sub(now)) }

// WholeSeconds rounds d up to whole seconds, at least one: Retry-After
// carries whole seconds, and 0 would invite an immediate retry.
func WholeSeconds(d time.Duration) time.Duration {
	return max(time.Duration(math.Ceil(d.Seconds()))*time.Second, time.Second)
}
