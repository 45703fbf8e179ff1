//go:build integration

package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gamefabric-alloc/allocsvc/local/dashboard"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// The dashboard's Play a match in a real browser: 3 players near
// eu-central-1 are matched, their MatchmakingSucceeded event goes on the
// local default bus, MatchmakingFunction's bootstrap places the match
// where their latencies (the GameLift stand-in) put it, and the page
// shows the match's game instance and its event published again with
// where the players connect.
func TestDashboardPlaysAMatch(t *testing.T) {
	browser := chromium(t)
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Fleet.Stagger = 100 * time.Millisecond
	server := []localstack.FleetProcess{{Command: localstack.SampleServer, ConcurrentExecutions: 1, Env: sampleServerEnv("5m")}}
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": server, "eu-central-1": server}
	s, _ := startLocalStack(t, cfg, t.TempDir())
	dash, err := dashboard.Start(s, cfg.Dashboard.Port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dash.Close() })
	testkit.WaitFor(t, 30*time.Second, "the game servers registered", func() bool {
		return len(registeredAt(s.Allocators[0], "dev-us-west")) == 1 && len(registeredAt(s.Allocators[1], "dev-eu-central-1")) == 1
	})

	ctx := headless(t, browser)
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	step, text := pageActions(t, ctx)

	match := `#instances tr[data-match]`
	step("play a match of 3 players near eu-central-1", 60*time.Second,
		chromedp.Navigate(dash.URL),
		chromedp.WaitVisible(css("#match-form")),
		chromedp.SetValue(css("#match-players"), "3"),
		chromedp.SetValue(css("#match-near"), "eu-central-1"),
		chromedp.Click(css("#match-submit")),
		chromedp.WaitVisible(css(match)),
		chromedp.WaitEnabled(css("#match-submit")))
	if got := text("#flash"); !strings.Contains(got, "of 3 players near eu-central-1 is on the default bus") {
		t.Errorf("the flash says %q", got)
	}
	step("the match's game instance Linked", 60*time.Second, chromedp.WaitVisible(css(match+`[data-state="Linked"]`)))
	if got := text(match); !strings.Contains(got, "match") || !strings.Contains(got, "eu-central-1") {
		t.Errorf("the match's row says %q, want it tagged and in eu-central-1", got)
	}
	again := `#events li[data-detail-type="GameFabricMatchmakingSucceeded"]`
	step("its event published again, with the server", 30*time.Second, chromedp.WaitVisible(css(again+` span[data-address]`)))
	id, rowID := text(again), text(match+" button[data-trace]")
	if !strings.Contains(id, strings.TrimPrefix(rowID, "▸ ")) || !strings.Contains(id, "players connect to 127.0.0.1:") {
		t.Errorf("the event %q is not the match %q's, with where its players connect", id, rowID)
	}
	if calls := s.GameLift.Calls(); len(calls) != 1 || len(calls[0]) != 3 {
		t.Errorf("DescribeMatchmaking calls %v, want the match's 3 tickets once", calls)
	}
	page := text("body")
	for _, bad := range []string{"[object ", "undefined", "NaN", "Invalid Date"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page shows %q:\n%s", bad, page)
		}
	}
}
