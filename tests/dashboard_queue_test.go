//go:build integration

package tests

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
)

// browserStep runs actions within a time, failing the test with what.
type browserStep func(what string, within time.Duration, actions ...chromedp.Action[chromedp.Void])

// watchAPlacementWait is the README's "watch a placement wait" on the
// dashboard of TestDashboardInABrowser, which has left one us-west game
// server registered: Drain us-west, allocate a whole server there with a
// queue timeout and see it Queued with its deadline, queue a second and
// Cancel it, then see the first placed when the region refills, on that
// server, and the cancelled one never reach GameFabric.
func watchAPlacementWait(t *testing.T, ctx context.Context, s *localstack.Stack, step browserStep, text func(string) string) {
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	row := func(id string) string { return fmt.Sprintf(`#instances tr[data-instance=%q]`, id) }
	us := `#regions tr[data-region="us-west"]`
	step("drain us-west", 10*time.Second,
		chromedp.Click(css(`button[data-drain="us-west"]`)),
		chromedp.WaitVisible(css(us+` td[data-drained="true"]`)))
	if got := text(us + ` td[data-drained]`); !strings.Contains(got, "Drained") || !strings.Contains(got, "Refill now") {
		t.Errorf("the drained us-west row says %q", got)
	}
	step("queue a whole server in us-west", 20*time.Second,
		chromedp.SetValue(css("#alloc-region"), "us-west"),
		chromedp.SetValue(css("#alloc-queue"), "60"),
		chromedp.Click(css("#alloc-dedicated")),
		chromedp.SetValue(css("#alloc-id"), "gi-dash-q1"),
		chromedp.Click(css("#alloc-submit")),
		chromedp.WaitVisible(css(row("gi-dash-q1")+`[data-state="Queued"] [data-queued-until]`)),
		chromedp.WaitEnabled(css("#alloc-submit")))
	if got := text(row("gi-dash-q1") + " td.state"); !strings.Contains(got, "until") || !strings.Contains(got, "left") || !strings.Contains(got, "attempt") {
		t.Errorf("the Queued row says %q, want its deadline, the time left and its attempts", got)
	}
	if got := text("#flash"); !strings.Contains(got, "gi-dash-q1 is Queued until") {
		t.Errorf("the flash says %q", got)
	}
	step("queue another", 20*time.Second,
		chromedp.SetValue(css("#alloc-id"), "gi-dash-q2"),
		chromedp.Click(css("#alloc-submit")),
		chromedp.WaitVisible(css(row("gi-dash-q2")+`[data-state="Queued"] button[data-cancel="gi-dash-q2"]`)))
	cancelInTheBrowser(t, ctx, row("gi-dash-q2"))
	if _, doc := httpJSON(t, http.MethodGet, s.APIURL+"/v1/allocations/gi-dash-q2", "", ""); fmt.Sprint(doc["error"]) == "" ||
		!strings.Contains(fmt.Sprint(doc["error"]), "PLACEMENT_CANCELLED") {
		t.Errorf("gi-dash-q2 after Cancel: %v", doc)
	}

	// The drain is 20 s; the queue tries again as it ends (Retry-After).
	step("gi-dash-q1 placed when us-west refills", 60*time.Second,
		chromedp.WaitVisible(css(us+` td[data-drained="false"]`)),
		chromedp.WaitVisible(css(row("gi-dash-q1")+`[data-state="Linked"][data-placement="allocator"]`)))
	if got := text(row("gi-dash-q1") + " td.state"); !strings.Contains(got, "was queued") {
		t.Errorf("the placed row says %q, want that it waited", got)
	}
	if _, doc := httpJSON(t, http.MethodGet, s.APIURL+"/v1/allocations/gi-dash-q1", "", ""); doc["queuedUntil"] == nil {
		t.Errorf("gi-dash-q1 has no queuedUntil: %v", doc)
	}
	for _, a := range s.Allocators[0].Emulator.Allocations() {
		if a.Payload["GameInstanceId"] == "gi-dash-q2" {
			t.Error("the cancelled placement reached GameFabric")
		}
	}
}

// cancelInTheBrowser clicks Cancel until the row is Failed, at most three
// times: a click while the queue worker is asking a region (Allocating) is
// refused, and the next, with the placement Queued again, cancels it.
func cancelInTheBrowser(t *testing.T, ctx context.Context, row string) {
	t.Helper()
	var err error
	for try := 0; try < 3; try++ {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = chromedp.Do(cctx, chromedp.Click(chromedp.CSS(row+` button[data-cancel]`)),
			chromedp.WaitVisible(chromedp.CSS(row+`[data-state="Failed"]`)))
		cancel()
		if err == nil {
			return
		}
	}
	shot(t, ctx, "failed")
	t.Fatalf("cancel %s: %v", row, err)
}
