//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store/regiontable"
)

// A region that worked and then stops answering is marked Unhealthy,
// skipped, and after the cooldown probed by one allocation, which brings
// it back. (A region with no matching server is one armada set's
// shortage, not the region's fault: it never opens the breaker.)
func TestRegionBreakerThroughLocalStack(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Parameters["RegionFailureThreshold"] = "2"
	cfg.Parameters["RegionCooldown"] = "2s"
	cfg.Parameters["AllocateAttemptTimeout"] = "1s"
	cfg.Fleet.Stagger = 50 * time.Millisecond
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": {{Command: localstack.SampleServer, ConcurrentExecutions: 7,
		Env: []string{"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set", "HEARTBEAT_INTERVAL=1s"}}}}
	s, logs := startLocalStack(t, cfg, t.TempDir())
	// ap-south is listed by no Allocator: it is the first one's, under its
	// own name, like us-west's servers.
	us, _ := s.AllocatorFor("ap-south")
	testkit.WaitFor(t, 30*time.Second, "seven us-west servers", func() bool { return len(us.Emulator.Servers()) == 7 })
	health := regiontable.New(harness.NewDynamoDB(harness.AWSConfig(), s.DynamoDB), s.Tables["RegionHealthTable"], regionhealth.DefaultBreakerPolicy)
	state := func(region string) regionhealth.Health {
		got, err := health.Get(context.Background(), []string{region})
		if err != nil {
			t.Fatal(err)
		}
		return got[region]
	}
	backend := backendClient(t, s)
	allocateIn := func(id, first string) (int, []string) {
		status, a, _ := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: id, PreferredRegions: []string{first, "us-west"}})
		var reasons []string
		for _, at := range a.Attempts {
			reasons = append(reasons, fmt.Sprintf("%s:%d:%s", at.Region, at.Status, at.Reason))
		}
		return status, reasons
	}
	allocate := func(id string) (int, []string) { return allocateIn(id, "ap-south") }
	// register adds an ap-south server whose allocation callback answers
	// at once, or hangs past the attempt timeout.
	register := func(hang bool) {
		callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hang {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"ok": "yes"})
		}))
		t.Cleanup(callback.Close)
		addr := strings.TrimPrefix(callback.URL, "http://")
		if st, _ := httpJSON(t, http.MethodPost, us.RegistryURL(), us.RegistryToken(),
			fmt.Sprintf(`{"address":%q,"region":"ap-south","priority":0,"attributes":{"env":"prag","armadaset":"sample-game-armada-set"},"callback":{"token":"t","url":"%s/allocate"},"ports":{"game":1}}`, addr, addr)); st/100 != 2 {
			t.Fatalf("register an ap-south server: %d", st)
		}
	}

	// No ap-south server yet: "no matching server" twice does not open it.
	for i := range 2 {
		if status, reasons := allocate(fmt.Sprintf("gi-brk-none-%d", i)); status != 201 || !strings.HasPrefix(reasons[0], "ap-south:404:") {
			t.Fatalf("allocation %d: %d %v", i, status, reasons)
		}
	}
	if h := state("ap-south"); h.State == regionhealth.RegionUnhealthy || h.ConsecutiveFailures != 0 {
		t.Fatalf("ap-south = %+v after two 404s, want no failures counted", h)
	}
	// ap-south works once...
	register(false)
	if status, reasons := allocate("gi-brk-0"); status != 201 || !strings.HasPrefix(reasons[0], "ap-south:200:") {
		t.Fatalf("first ap-south allocation: %d %v", status, reasons)
	}
	// A region a caller invents gets tried (GameFabric says 404) but never
	// becomes a health record or a metric dimension.
	if status, reasons := allocateIn("gi-brk-invented", "zz-invented-by-a-caller"); status != 201 || !strings.HasPrefix(reasons[0], "zz-invented-by-a-caller:404:") {
		t.Fatalf("invented region: %d %v", status, reasons)
	}
	if h := state("zz-invented-by-a-caller"); !h.FirstSeenAt.IsZero() {
		t.Fatalf("an invented region has a health record: %+v", h)
	}
	// Its metrics are written before its answer is logged.
	testkit.WaitFor(t, 5*time.Second, "the allocation's log", func() bool {
		return strings.Contains(logs.String(), `"msg":"allocation answered","requestId"`) && strings.Contains(logs.String(), `"gameInstanceId":"gi-brk-invented","created":true`)
	})
	if !strings.Contains(logs.String(), `"Region":"other","UpstreamLatency"`) {
		t.Fatal("no UpstreamLatency under the Region dimension other")
	}
	if strings.Contains(logs.String(), `"Region":"zz-invented`) {
		t.Fatal("an invented region became a metric dimension")
	}

	// ...then stops answering: two timed-out allocations open its breaker.
	register(true)
	register(true)
	for i := 1; i <= 2; i++ {
		status, reasons := allocate(fmt.Sprintf("gi-brk-%d", i))
		if status != 201 || !strings.HasPrefix(reasons[0], "ap-south:0:") || !strings.HasPrefix(reasons[1], "us-west:200:") {
			t.Fatalf("allocation %d: %d %v", i, status, reasons)
		}
	}
	if h := state("ap-south"); h.State != regionhealth.RegionUnhealthy || h.Reason != regionhealth.BecauseAllocationFailures {
		t.Fatalf("ap-south = %+v, want Unhealthy after 2 failures", h)
	}
	if h := state("us-west"); h.State != regionhealth.RegionDeployed {
		t.Fatalf("us-west = %+v, want Deployed", h)
	}

	// While the breaker is open ap-south is skipped without a call.
	status, reasons := allocate("gi-brk-3")
	if status != 201 || !strings.Contains(reasons[0], "ap-south:0:preferred #1; skipped: unhealthy") {
		t.Fatalf("open breaker: %d %v", status, reasons)
	}

	// A working server comes up in ap-south; after the cooldown (and the
	// breaker's 5 s read cache) one allocation probes the region and closes it.
	register(false)
	time.Sleep(6 * time.Second)
	status, reasons = allocate("gi-brk-4")
	if status != 201 || !strings.HasPrefix(reasons[0], "ap-south:200:preferred #1; half-open probe") {
		t.Fatalf("probe: %d %v", status, reasons)
	}
	if h := state("ap-south"); h.State != regionhealth.RegionDeployed || h.ConsecutiveFailures != 0 {
		t.Fatalf("ap-south after the probe = %+v, want Deployed", h)
	}
}
