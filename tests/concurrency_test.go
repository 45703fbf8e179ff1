//go:build integration

package tests

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
)

// Fifty backends (or fifty retries) ask for the same game instance at once:
// GameFabric must be asked exactly once, and every caller gets the result or
// ALLOCATION_IN_PROGRESS, never a second server.
func TestConcurrentAllocateOneUpstreamCall(t *testing.T) {
	const callers = 50
	e := newEnv(t, envOptions{fallbackRegion: "eu-central-1"})
	// Slow enough that most callers arrive while the allocation is in flight.
	e.stub.Always("us-west", gfemu.Answer{Delay: 300 * time.Millisecond})
	body := `{"gameInstanceId":"gi-race","desiredRegion":"us-west","gameServerVersion":"prag::sample-game-armada-set"}`

	start := make(chan struct{})
	results := make([]response, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = e.allocate(t, body)
		}()
	}
	close(start)
	wg.Wait()

	counts := map[int]int{}
	addresses := map[string]bool{}
	for _, r := range results {
		counts[r.Status]++
		switch r.Status {
		case http.StatusCreated, http.StatusOK:
			addresses[r.Body["server"].(map[string]any)["address"].(string)] = true
		case http.StatusConflict:
			if r.code() != "ALLOCATION_IN_PROGRESS" || r.Header.Get("Retry-After") == "" {
				t.Errorf("409 without ALLOCATION_IN_PROGRESS and Retry-After: %s", r.Raw)
			}
		default:
			t.Errorf("unexpected answer %d: %s", r.Status, r.Raw)
		}
	}
	t.Logf("answers by status: %v", counts)
	if n := len(e.stub.Allocations()); n != 1 || len(e.stub.Calls()) != 1 {
		t.Fatalf("GameFabric allocated %d servers in %d calls, want exactly 1", n, len(e.stub.Calls()))
	}
	if counts[http.StatusCreated] != 1 || len(addresses) != 1 {
		t.Fatalf("%d callers got 201 and %d distinct servers were handed out, want 1 and 1", counts[http.StatusCreated], len(addresses))
	}
	if counts[http.StatusConflict] == 0 {
		t.Fatalf("no caller saw the allocation in flight; the race was not exercised: %v", counts)
	}
	after := e.allocate(t, body).expect(t, http.StatusOK, "")
	if !addresses[after.Body["server"].(map[string]any)["address"].(string)] {
		t.Fatalf("replay after the race returned another server: %s", after.Raw)
	}
}
