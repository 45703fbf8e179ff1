//go:build integration

package tests

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gamefabric-alloc/allocsvc/local/dashboard"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// The dashboard in a real browser: Debian's headless Chromium, driven over
// the DevTools protocol, allocates a game through the form, watches it
// link, ends it with the End button (the player's IWON to the game port),
// watches it end, and finds the lifecycle events in the list; then, as
// make dev's us-west servers offer 4 rooms, allocates three more games
// there, sees one server hold all three at once, ends one and sees its
// room come back; then drains us-west and watches a queued placement wait
// and be placed, and cancels another (watchAPlacementWait). The whole
// local product runs behind it, as under make dev.
func TestDashboardInABrowser(t *testing.T) {
	browser := chromium(t)
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Fleet.Stagger = 100 * time.Millisecond
	server := func(n, rooms int) []localstack.FleetProcess {
		return []localstack.FleetProcess{{Command: localstack.SampleServer, ConcurrentExecutions: n, Rooms: rooms, Env: sampleServerEnv("5m")}}
	}
	// make dev's shape (localstack.Defaults): us-west's servers host 4
	// games each, eu-central-1's one.
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": server(2, 4), "eu-central-1": server(1, 0)}
	s, _ := startLocalStack(t, cfg, t.TempDir())
	dash, err := dashboard.Start(s, cfg.Dashboard.Port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dash.Close() })
	testkit.WaitFor(t, 30*time.Second, "the game servers registered", func() bool {
		return len(registeredAt(s.Allocators[0], "dev-us-west")) == 2 && len(registeredAt(s.Allocators[1], "dev-eu-central-1")) == 1
	})

	ctx := headless(t, browser)
	step, text := pageActions(t, ctx)
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	// The page lists both regions, their Allocators and registered servers.
	step("open the dashboard", 60*time.Second,
		chromedp.Navigate(dash.URL),
		chromedp.WaitVisible(css(`#regions tr[data-region="us-west"] td[data-servers="2"]`)),
		chromedp.WaitVisible(css(`#regions tr[data-region="eu-central-1"] td[data-servers="1"]`)))
	if got := text(`#regions tr[data-region="us-west"]`); !strings.Contains(got, "dev-us-west") {
		t.Errorf("the us-west row does not name its Allocator's region string: %q", got)
	}

	// Allocate through the form; the row goes Allocated, then Linked, on a
	// whole server from the Allocator, which offers its rooms as it links.
	allocate := func(region, id string) {
		t.Helper()
		step("allocate "+id+" in "+region, 20*time.Second,
			chromedp.SetValue(css("#alloc-region"), region),
			chromedp.SetValue(css("#alloc-id"), id),
			chromedp.Click(css("#alloc-submit")),
			chromedp.WaitVisible(css(fmt.Sprintf(`#instances tr[data-instance=%q][data-placement]`, id))),
			chromedp.WaitEnabled(css("#alloc-submit"))) // the form takes the next game
	}
	allocate("us-west", "gi-dash-1")
	row := `#instances tr[data-instance="gi-dash-1"]`
	step("gi-dash-1 shows Linked", 60*time.Second, chromedp.WaitVisible(css(row+`[data-state="Linked"][data-placement="allocator"]`)))
	if got := text(row + " td.state"); got != "Linked" {
		t.Errorf("the state badge says %q", got)
	}
	_, doc := httpJSON(t, http.MethodGet, s.APIURL+"/v1/allocations/gi-dash-1", "", "")
	srv, _ := doc["server"].(map[string]any)
	shared, _ := srv["address"].(string)
	if shared == "" {
		t.Fatalf("gi-dash-1 has no server: %v", doc)
	}
	rooms := fmt.Sprintf(`#rooms tr[data-region="us-west"][data-room-server=%q]`, shared)
	step("gi-dash-1's server offers 4 rooms", 10*time.Second, chromedp.WaitVisible(css(rooms+`[data-in-use="1"][data-capacity="4"]`)))

	// Its decision trace: one attempt, in us-west, answered 200.
	step("open the decision trace", 10*time.Second,
		chromedp.Click(css(`button[data-trace="gi-dash-1"]`)),
		chromedp.WaitVisible(css(`tr[data-trace-of="gi-dash-1"] table.trace`)))
	if got := text(`tr[data-trace-of="gi-dash-1"] table.trace tbody`); !strings.Contains(got, "us-west") || !strings.Contains(got, "200") {
		t.Errorf("decision trace = %q, want the us-west attempt that got 200", got)
	}

	// End it like its player: the row goes Ended, through the game server.
	step("end gi-dash-1", 60*time.Second,
		chromedp.Click(css(`button[data-end="gi-dash-1"]`)),
		chromedp.WaitVisible(css(row+`[data-state="Ended"]`)))
	if _, doc := httpJSON(t, http.MethodGet, s.APIURL+"/v1/allocations/gi-dash-1", "", ""); doc["endReason"] != "IWON" {
		t.Errorf("gi-dash-1 ended with %v, want the player's IWON", doc["endReason"])
	}

	// The lifecycle events as published, newest first.
	for _, dt := range []string{"GameServerAllocated", "GameServerLinked", "GameInstanceEnded"} {
		step(dt+" in the events list", 60*time.Second,
			chromedp.WaitVisible(css(fmt.Sprintf(`#events li[data-detail-type=%q][data-instance="gi-dash-1"]`, dt))))
	}

	// Three games in us-west go to the rooms of gi-dash-1's server, free
	// again since it ended: one server holds them all at once.
	for _, id := range []string{"gi-dash-2", "gi-dash-3", "gi-dash-4"} {
		allocate("us-west", id)
	}
	for _, id := range []string{"gi-dash-2", "gi-dash-3", "gi-dash-4"} {
		step(id+" Linked in a room", 60*time.Second,
			chromedp.WaitVisible(css(fmt.Sprintf(`#instances tr[data-instance=%q][data-state="Linked"][data-placement="room"]`, id))))
	}
	step("one server holds 3 of its 4 rooms", 10*time.Second, chromedp.WaitVisible(css(rooms+`[data-in-use="3"]`)))
	if got := text(rooms); !strings.Contains(got, "3/4 rooms") || !strings.Contains(got, "Accepting") ||
		!strings.Contains(got, "gi-dash-2") || !strings.Contains(got, "gi-dash-3") || !strings.Contains(got, "gi-dash-4") {
		t.Errorf("the rooms of %s = %q, want 3/4 rooms held by gi-dash-2, 3 and 4", shared, got)
	}
	step("open gi-dash-2's decision trace, close gi-dash-1's", 10*time.Second,
		chromedp.Click(css(`button[data-trace="gi-dash-1"]`)),
		chromedp.Click(css(`button[data-trace="gi-dash-2"]`)),
		chromedp.WaitVisible(css(`tr[data-trace-of="gi-dash-2"] table.trace`)))
	if got := text(`tr[data-trace-of="gi-dash-2"] table.trace tbody`); !strings.Contains(got, "a room on "+shared) {
		t.Errorf("decision trace of a room = %q, want its room on %s", got, shared)
	}

	// Ending one game gives its room back; the others play on.
	step("end gi-dash-3", 60*time.Second,
		chromedp.Click(css(`button[data-end="gi-dash-3"]`)),
		chromedp.WaitVisible(css(`#instances tr[data-instance="gi-dash-3"][data-state="Ended"]`)),
		chromedp.WaitVisible(css(rooms+`[data-in-use="2"]`)))
	if got := text(rooms); !strings.Contains(got, "2/4 rooms") || strings.Contains(got, "gi-dash-3") {
		t.Errorf("the rooms of %s after gi-dash-3 ended = %q", shared, got)
	}
	for _, id := range []string{"gi-dash-2", "gi-dash-4"} {
		step(id+" still Linked", 5*time.Second, chromedp.WaitVisible(css(fmt.Sprintf(`#instances tr[data-instance=%q][data-state="Linked"]`, id))))
	}

	// A game with a generated id, in the other region, on a dedicated
	// server, left running for the screenshot.
	step("allocate in eu-central-1 with a generated id", 20*time.Second,
		chromedp.SetValue(css("#alloc-region"), "eu-central-1"),
		chromedp.Click(css("#alloc-submit")))
	step("the generated instance shows Linked", 60*time.Second,
		chromedp.WaitVisible(css(`#instances tr[data-instance^="dash-"][data-state="Linked"][data-placement="allocator"]`)))
	step("its link in the events list", 60*time.Second,
		chromedp.WaitVisible(css(`#events li[data-detail-type="GameServerLinked"][data-instance^="dash-"]`)))
	step("the first instance is still listed as Ended", 5*time.Second, chromedp.WaitVisible(css(row+`[data-state="Ended"]`)))
	step("the flash says the allocation's outcome", 5*time.Second, chromedp.WaitVisible(css("#flash.ok")))

	// A placement that waits for a drained region, and one cancelled.
	watchAPlacementWait(t, ctx, s, step, text)

	// Everything rendered as text, nothing as a stray JavaScript value.
	page := text("body")
	for _, bad := range []string{"[object ", "undefined", "NaN", "Invalid Date"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page shows %q:\n%s", bad, page)
		}
	}

	png := shot(t, ctx, "dashboard")
	if os.Getenv("UPDATE_SCREENSHOT") == "1" {
		if err := os.WriteFile(filepath.Join(stack.repoRoot, "docs", "dashboard.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote docs/dashboard.png (%d KiB)", len(png)>>10)
	}
}

// chromium is Debian's chromium; a machine without it fails, saying how to
// get it, rather than skipping the browser test.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the dashboard test needs Debian's chromium on PATH: run `make deps` (as root it installs the chromium package): %v", err)
	}
	return path
}

// headless starts Chromium without a window or sandbox (tests run as root
// in containers), on a pipe rather than a debugging port, and with every
// host name unresolvable: the page under test is on 127.0.0.1 and must
// need nothing else.
// pageActions are a browser test's two moves on the page in ctx: step
// runs actions within a time (a screenshot, then the test fails, if they
// do not complete) and text reads an element's text.
func pageActions(t *testing.T, ctx context.Context) (step func(what string, within time.Duration, actions ...chromedp.Action[chromedp.Void]), text func(sel string) string) {
	step = func(what string, within time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			shot(t, ctx, "failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	text = func(sel string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		got, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("the text of %s: %v", sel, err)
		}
		return got
	}
	return step, text
}

func headless(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 960),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("no-proxy-server", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser, which lives as long as the
	// context of that action: ctx itself, bounded here by cancelling it.
	bound := time.AfterFunc(time.Minute, cancel)
	err := chromedp.Do(ctx)
	if !bound.Stop() {
		err = fmt.Errorf("not started within a minute: %w", err)
	}
	if err != nil {
		t.Fatalf("start headless chromium (%s): %v", path, err)
	}
	return ctx
}

// shot saves a full-page PNG into the test's temp dir and returns it.
func shot(t *testing.T, ctx context.Context, name string) []byte {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return nil
	}
	path := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err == nil {
		t.Logf("screenshot: %s", path)
	}
	return png
}
