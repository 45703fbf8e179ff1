//go:build integration

package tests

import (
	"net/http"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
)

// A primary that does not answer in time may still have allocated a server
// (GameFabric's answer was lost). The fallback's server is the one recorded;
// the orphan, holding its own step's token, cannot link to the instance.
func TestOrphanOfATimedOutStepCannotLink(t *testing.T) {
	e := newEnv(t, envOptions{fallbackRegion: "eu-central-1", attemptTimeout: 300 * time.Millisecond})
	e.stub.Queue("us-west", gfemu.Answer{Delay: 2 * time.Second})
	e.stub.Queue("eu-central-1", gfemu.Answer{})
	e.allocate(t, `{"gameInstanceId":"gi-o","desiredRegion":"us-west"}`).expect(t, http.StatusCreated, "")

	calls := e.stub.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d upstream calls, want 2", len(calls))
	}
	tokenOf := func(c gfemu.Call) string { s, _ := c.Payload["PartnerGameToken"].(string); return s }
	byRegion := map[string]string{calls[0].Region: tokenOf(calls[0]), calls[1].Region: tokenOf(calls[1])}
	orphan, winner := byRegion["us-west"], byRegion["eu-central-1"]
	if orphan == "" || orphan == winner {
		t.Fatalf("tokens sent: %v, want one per step", byRegion)
	}
	link := func(token string) response {
		return e.doAuth(t, http.MethodPost, "/v1/game-instances/gi-o/link", "Bearer "+token, "")
	}
	link(orphan).expect(t, http.StatusUnauthorized, "UNAUTHORIZED")
	if r := link(winner).expect(t, http.StatusOK, ""); r.Body["state"] != "Linked" {
		t.Fatalf("winner's link = %s", r.Raw)
	}
	if item := e.rawItem(t, "gi-o"); item["candidateTokenHashes"] != nil {
		t.Fatalf("candidate hashes outlived the claim: %v", item["candidateTokenHashes"])
	}
}
