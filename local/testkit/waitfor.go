// Package testkit holds helpers for tests only: polling for state other
// goroutines or processes reach on their own, and a buffer many of them can
// write while a test reads it. It imports testing, so no tool may import it
// (local/cmd's tests check that none does); tools share local/harness.
package testkit

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing t if it still does not after
// within: for state that other processes or goroutines reach on their own.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
