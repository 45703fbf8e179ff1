// Package testkit holds helpers for tests only: polling for state other
// goroutines or processes reach on their own, and a buffer many of them can
// write while a test reads it. It imports testing, so no tool may import it
// (local/cmd's tests check that none does); tools share local/harness.
package testkit
