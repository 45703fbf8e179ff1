package gfemu

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

// TestOurClientUnderstandsTheEmulator guards against the emulator and
// shared/gamefabric drifting apart: the local stack is only useful if our
// real client decodes every answer it gives.
func TestOurClientUnderstandsTheEmulator(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.QPS, c.Burst = 1, 2 })
	g := newGameServer(t, answering(http.StatusOK, `{"ok":true}`))
	f.mustRegister(registerBody("127.0.0.1:7001", 0, g, "cb"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	ping := httptest.NewServer(NewPingService(PingConfig{Tokens: []string{pingTok}, Sources: []PingSource{{Allocator: f.emu}}}).Handler())
	defer ping.Close()
	pings, err := gamefabric.NewPingClient(ping.Client(), ping.URL+DefaultPingPath).Fetch(ctx, pingTok)
	if err != nil || len(pings.Regions["us-west"]) != 1 || pings.Regions["us-west"][0].Port != 7001 || pings.Report.Problems() {
		t.Fatalf("ping Fetch = %v, %v", pings, err)
	}

	c := gamefabric.NewClient(f.srv.Client(), f.srv.URL+prefix+"/allocate")
	req := gamefabric.AllocateRequest{Region: "us-west", Attributes: map[string]string{"env": "prag"}, Payload: map[string]string{"GameInstanceId": "g"}}
	a, err := c.Allocate(ctx, allocTok, req)
	if err != nil || a.Address != "127.0.0.1:7001" || a.IP != "127.0.0.1" || a.Token != "cb" || string(a.Payload) != `{"ok":true}` {
		t.Fatalf("Allocate = %+v, %v", a, err)
	}

	var e *gamefabric.Error
	if _, err := c.Allocate(ctx, allocTok, req); !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Message == "" {
		t.Fatalf("Allocate with nothing left = %v, want a 404 with a message", err)
	}
	if _, err := c.Allocate(ctx, allocTok, req); !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.RetryAfter != time.Second {
		t.Fatalf("Allocate beyond the burst = %v, want 429 with a 1s Retry-After", err)
	}
}
