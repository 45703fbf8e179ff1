package gfemu

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// Drain makes region (a region string, as allocate calls send it) run dry
// until until: every allocate for it answers as if no game server matched,
// while its servers stay registered and come back untouched afterwards. It
// stands for a launch that took every buffered server of an Armada until
// it scaled up, so queued placements can be watched waiting and being
// fulfilled. A zero or past until refills the region now. The Ping Service
// still lists the region's servers: only allocation runs dry.
func (e *Emulator) Drain(region string, until time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !until.After(e.now()) {
		delete(e.drained, region)
		return
	}
	e.drained[region] = until
}

// Drained reports whether region is drained now.
func (e *Emulator) Drained(region string) bool {
	_, ok := e.DrainedUntil(region)
	return ok
}

// DrainedUntil is when a drained region refills; ok is false (and until
// zero) when it is not drained now.
func (e *Emulator) DrainedUntil(region string) (until time.Time, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if until, ok = e.drained[region]; !ok || !until.After(e.now()) {
		return time.Time{}, false
	}
	return until, true
}

// answerDrained answers allocate call i for a drained region and reports
// whether it did. The answer is the emulator's own "no matching server"
// (GameFabric's real status for it is not public), plus a Retry-After of
// the time left, rounded up: the service's queue honours it, so a queued
// placement is tried again as the region refills, not a backoff later.
func (e *Emulator) answerDrained(w http.ResponseWriter, region string, attrs map[string]string, i int) bool {
	until, ok := e.DrainedUntil(region)
	if !ok {
		return false
	}
	wait := max(1, int(math.Ceil(until.Sub(e.now()).Seconds())))
	e.answered(i, http.StatusNotFound, "")
	w.Header().Set("Retry-After", strconv.Itoa(wait))
	writeError(w, http.StatusNotFound, noServerMessage(region, attrs, 0)+" (drained for "+strconv.Itoa(wait)+" s more)")
	return true
}
