package gameinstance

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecondsUntil is a Retry-After until t: whole seconds, rounded up, at least one.
func SecondsUntil(t, now time.Time) time.Duration { return WholeSeconds(t.Sub(now)) }

// WholeSeconds rounds d up to whole seconds, at least one: Retry-After
// carries whole seconds, and 0 would invite an immediate retry.
func WholeSeconds(d time.Duration) time.Duration {
	return max(time.Duration(math.Ceil(d.Seconds()))*time.Second, time.Second)
}

// maxRetryAfter caps a parsed Retry-After: a day is far beyond any wait
// our service or GameFabric asks for, so more is garbage, and a Duration
// of that many seconds would overflow soon after.
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads a Retry-After header: delay-seconds or an HTTP
// date; delay-seconds at most a day. 0 when absent, unreadable or
// already past.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
