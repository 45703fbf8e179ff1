//go:build integration

package tests

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// GameLift's placement API on the local stack, through its function URL
// and the real bootstraps, with three real clients at once: the Go SDK
// (Smithy RPC v2 CBOR), botocore (AWS JSON 1.1) and the AWS CLI. Each runs
// the same scenario on placements of its own and must see the same
// answers. eu-central-1 is drained at first, so placements are PENDING,
// then FULFILLED when it refills; the queue "short" gives up after 5 s.
func TestGameLiftPlacementAPIWithRealClients(t *testing.T) {
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatal("this test runs the AWS CLI: install it (pip install awscli) so that aws is on PATH")
	}
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Fleet.Stagger = 100 * time.Millisecond
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"eu-central-1": {{Command: localstack.SampleServer, ConcurrentExecutions: 4,
		Env: sampleServerEnv("2m")}}}
	cfg.Parameters["GameLiftQueues"] = `{"waits": {"regions": ["eu-central-1"], "timeoutSeconds": 60, "gameServerVersion": "prag::sample-game-armada-set"},
		"short": {"regions": ["eu-central-1"], "timeoutSeconds": 5, "gameServerVersion": "prag::sample-game-armada-set"}}`
	s, _ := startLocalStack(t, cfg, t.TempDir())
	api, eu := s.GameLiftAPI(), s.Allocators[1]
	if api == nil {
		t.Fatal("the stack serves no GameLift API")
	}
	testkit.WaitFor(t, 30*time.Second, "4 eu-central-1 game servers registered", func() bool { return len(registeredAt(eu, "dev-eu-central-1")) == 4 })
	clients := map[string]placementClient{"go": newGoClient(api), "boto": newBotoClient(t, api), "cli": cliClient{api}}
	dry := keepDry(t, s, "eu-central-1", len(clients))
	run := fmt.Sprint(time.Now().Unix() % 100000)
	var mu sync.Mutex
	results, cancelledCalls := map[string][]string{}, map[string]int{}
	var wg sync.WaitGroup
	for name, c := range clients {
		wg.Go(func() {
			got, cancelled := gameLiftScenario(t, c, "pl-"+name+"-"+run, eu, dry)
			mu.Lock()
			defer mu.Unlock()
			results[name], cancelledCalls[name] = got, cancelled
		})
	}
	wg.Wait()
	want := []string{
		"a short queue: PENDING region= ip=false port= placed=0 start=true end=false",
		"start: PENDING region= ip=false port= placed=0 start=true end=false",
		"the same start again: PENDING region= ip=false port= placed=0 start=true end=false",
		"another start: PENDING region= ip=false port= placed=0 start=true end=false",
		"stop while pending: CANCELLED region= ip=false port= placed=0 start=true end=true",
		"an unknown id: NotFoundException",
		"a wrong secret key: UnauthorizedException",
		"other inputs under the same id: InvalidRequestException",
		"the stopped one: CANCELLED region= ip=false port= placed=0 start=true end=true",
		"the short queue runs out: TIMED_OUT region= ip=false port= placed=0 start=true end=true",
		"capacity returns: FULFILLED region=eu-central-1 ip=true port=int placed=1 start=true end=true",
		"stop after fulfilled: InvalidRequestException",
		"still fulfilled: FULFILLED region=eu-central-1 ip=true port=int placed=1 start=true end=true",
	}
	for name, got := range results {
		if !slices.Equal(got, want) {
			t.Errorf("%s saw:\n  %s\nwant:\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	// One server per fulfilled placement, however often it was started;
	// nothing asked for a stopped placement after its stop.
	for name := range clients {
		id := "pl-" + name + "-" + run
		if n := countCalls(eu, id+"-a", true); n != 1 {
			t.Errorf("%s: %d allocations for its placement, want 1", name, n)
		}
		if n := countCalls(eu, id+"-b", false); n != cancelledCalls[name] {
			t.Errorf("%s: %d calls for the stopped placement, %d when it was stopped", name, n, cancelledCalls[name])
		}
	}
	checkPlacementEvents(t, s, run)
}

// keepDry keeps region dry, a few seconds at a time (the Retry-After the
// queue worker waits), until done has been called n times: until every
// client is through what must happen while it is dry (the AWS CLI may take
// seconds a call on a busy machine).
func keepDry(t *testing.T, s *localstack.Stack, region string, n int) (done func()) {
	var dry sync.WaitGroup
	dry.Add(n)
	wet := make(chan struct{})
	go func() {
		for {
			if _, err := s.Drain(region, 3*time.Second); err != nil {
				t.Error(err)
			}
			select {
			case <-wet:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	go func() { dry.Wait(); close(wet) }()
	return dry.Done
}

// gameLiftScenario runs the scenario with client c on placements id-a
// (waits, then fulfilled), id-b (stopped) and id-c (times out), calling
// dryDone once what needs eu-central-1 dry is done: each step's name and
// what c saw, and how many upstream calls id-b had had when it was
// stopped.
func gameLiftScenario(t *testing.T, c placementClient, id string, eu *localstack.Allocator, dryDone func()) ([]string, int) {
	var out []string
	step := func(name string, s seen) { out = append(out, name+": "+s.String()) }
	start := func(pid, queue, name string) map[string]any {
		return map[string]any{"PlacementId": pid, "GameSessionQueueName": queue, "MaximumPlayerSessionCount": 4, "GameSessionName": name,
			"GameProperties": []map[string]string{{"Key": "mode", "Value": "ctf"}}, "DesiredPlayerSessions": []map[string]string{{"PlayerId": "player-1"}}}
	}
	a, b, short := start(id+"-a", "waits", "arena"), start(id+"-b", "waits", "arena"), start(id+"-c", "short", "arena")
	do := func(op string, in map[string]any) seen { return c.call(t, placementCall{op: op, input: in}) }
	ref := func(pid string) map[string]any { return map[string]any{"PlacementId": pid} }
	step("a short queue", do("start_game_session_placement", short))
	step("start", do("start_game_session_placement", a))
	step("the same start again", do("start_game_session_placement", a))
	step("another start", do("start_game_session_placement", b))
	stopped := do("stop_game_session_placement", ref(id+"-b"))
	calls := countCalls(eu, id+"-b", false)
	step("stop while pending", stopped)
	step("an unknown id", do("describe_game_session_placement", ref(id+"-none")))
	step("a wrong secret key", c.call(t, placementCall{op: "describe_game_session_placement", input: ref(id + "-a"), wrongKey: true}))
	step("other inputs under the same id", do("start_game_session_placement", start(id+"-a", "waits", "another name")))
	step("the stopped one", do("describe_game_session_placement", ref(id+"-b")))
	step("the short queue runs out", pollUntil(t, c, id+"-c", 20*time.Second))
	dryDone()
	step("capacity returns", pollUntil(t, c, id+"-a", 40*time.Second))
	step("stop after fulfilled", do("stop_game_session_placement", ref(id+"-a")))
	step("still fulfilled", do("describe_game_session_placement", ref(id+"-a")))
	return out, calls
}

// countCalls counts the Allocator's calls (allocated: only those answered
// 200) for the game instance id.
func countCalls(a *localstack.Allocator, id string, allocated bool) int {
	calls := a.Emulator.Calls()
	if allocated {
		calls = a.Emulator.Allocations()
	}
	n := 0
	for _, c := range calls {
		if c.Payload["GameInstanceId"] == id {
			n++
		}
	}
	return n
}

// checkPlacementEvents reads the bus until every placement of the run has
// its GameLift Queue Placement Event, as GameLift's detail says it.
func checkPlacementEvents(t *testing.T, s *localstack.Stack, run string) {
	t.Helper()
	want := map[string]string{}
	for _, c := range []string{"go", "boto", "cli"} {
		id := "pl-" + c + "-" + run
		want[id+"-a"], want[id+"-b"], want[id+"-c"] = "PlacementFulfilled", "PlacementCancelled", "PlacementTimedOut"
	}
	got := map[string]string{}
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		evs, err := s.ReadTap(t.Context(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			var d struct{ PlacementID, Type, Port, IPAddress string }
			_ = json.Unmarshal(e.Detail, &d)
			if e.DetailType != "GameLift Queue Placement Event" || want[d.PlacementID] == "" {
				continue
			}
			if e.Source != "gamefabric.allocation" || len(e.Resources) != 1 || !strings.HasSuffix(e.Resources[0], ":gamesessionqueue/waits") &&
				!strings.HasSuffix(e.Resources[0], ":gamesessionqueue/short") || d.Type == "PlacementFulfilled" && (d.Port == "" || d.IPAddress == "") {
				t.Errorf("event %s", e.Raw)
			}
			got[d.PlacementID] = d.Type
		}
	}
	for id, typ := range want {
		if got[id] != typ {
			t.Errorf("%s: GameLift Queue Placement Event %q, want %q", id, got[id], typ)
		}
	}
}
