//go:build integration

package stack

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gamefabric-alloc/allocsvc/local/asyncinvoke"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// outcomes collects what became of every event a rule delivered.
type outcomes struct {
	mu  sync.Mutex
	all map[string][]asyncinvoke.Outcome
}

func (o *outcomes) observe(fn string, out asyncinvoke.Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all[fn] = append(o.all[fn], out)
}

func (o *outcomes) of(fn string) []asyncinvoke.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.all[fn])
}

// The whole local stack plays FlexMatch: a match put on moto's default bus
// reaches MatchmakingFunction's real bootstrap through MatchmakingRule,
// which reads the players' latencies from the GameLift stand-in (they put
// the match near its players, not in customEventData's region); its game
// server is allocated and EventsFunction publishes the match's event again
// with the server's address. A match the function can never take is
// invoked 1 + 2 times and set aside in MatchmakingDeadLetterQueue.
func TestAMatchIsPlacedByMatchmakingFunctionsBootstrap(t *testing.T) {
	cfg := Defaults()
	cfg.AnyFreePorts()
	logs, seen := &testkit.SyncBuffer{}, &outcomes{all: map[string][]asyncinvoke.Outcome{}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := Start(ctx, cfg, Options{Root: "../..", WorkDir: t.TempDir(), Log: logs,
		Rules: RuleTuning{RetryDelay: 100 * time.Millisecond, Observe: seen.observe}})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		_ = s.Close()
		if t.Failed() {
			t.Logf("stack log:\n%s", logs.String())
		}
	})
	testkit.WaitFor(t, time.Minute, "game servers registered in both regions", func() bool {
		return len(s.Allocators[0].Emulator.Servers()) > 0 && len(s.Allocators[1].Emulator.Servers()) > 0
	})

	matchID, err := s.PutMatch(ctx, MatchOptions{Players: 4, Near: "eu-central-1", CustomEventData: aws.String(`{"region":"us-west"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var inst struct{ State, Region string }
	testkit.WaitFor(t, time.Minute, "the match's game instance allocated", func() bool {
		inst = instance(t, s.APIURL, matchID)
		return inst.State == "Allocated" || inst.State == "Linked"
	})
	if inst.Region != "eu-central-1" {
		t.Errorf("the match is in %s, want eu-central-1, where its players' latencies put it", inst.Region)
	}
	if calls := s.GameLift.Calls(); len(calls) != 1 || len(calls[0]) != 4 {
		t.Errorf("DescribeMatchmaking calls %v, want one for the 4 tickets", calls)
	}
	var detail struct {
		Type            string `json:"type"`
		MatchID         string `json:"matchId"`
		GameSessionInfo struct {
			IPAddress string `json:"ipAddress"`
			Port      int    `json:"port"`
		} `json:"gameSessionInfo"`
	}
	testkit.WaitFor(t, 30*time.Second, "GameFabricMatchmakingSucceeded for the match", func() bool {
		for _, e := range s.RecentEvents(0) {
			if e.DetailType == "GameFabricMatchmakingSucceeded" && e.Source == EventsSource && json.Unmarshal(e.Detail, &detail) == nil && detail.MatchID == matchID {
				return true
			}
		}
		return false
	})
	if detail.Type != "GameFabricMatchmakingSucceeded" || detail.GameSessionInfo.IPAddress == "" || detail.GameSessionInfo.Port == 0 {
		t.Errorf("re-emitted detail %+v, want the server's ip and game port", detail)
	}
	if got := seen.of("MatchmakingFunction"); len(got) != 1 || got[0].Invocations != 1 || got[0].Err != nil {
		t.Errorf("MatchmakingFunction's events: %+v, want the match handled at the first invocation", got)
	}

	if _, err := s.PutMatch(ctx, MatchOptions{Players: 2, MatchID: "not a game instance id"}); err != nil {
		t.Fatal(err)
	}
	bodies, err := s.ReadQueue(ctx, "MatchmakingDeadLetterQueue", 30*time.Second)
	if err != nil || len(bodies) != 1 {
		t.Fatalf("MatchmakingDeadLetterQueue holds %d records (%v), want 1", len(bodies), err)
	}
	var rec struct {
		RequestContext struct{ ApproximateInvokeCount int } `json:"requestContext"`
		RequestPayload struct {
			Detail struct{ MatchID string } `json:"detail"`
		} `json:"requestPayload"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &rec); err != nil || rec.RequestContext.ApproximateInvokeCount != 3 ||
		rec.RequestPayload.Detail.MatchID != "not a game instance id" {
		t.Errorf("on-failure record %s (%v), want 3 invocations of the event", bodies[0], err)
	}
	testkit.WaitFor(t, 5*time.Second, "the second event given up on after 3 invocations", func() bool {
		got := seen.of("MatchmakingFunction")
		return len(got) == 2 && got[1].Invocations == 3 && got[1].Condition == asyncinvoke.RetriesExhausted
	})
}

// instance reads a game instance from the local HTTP API.
func instance(t *testing.T, apiURL, id string) (inst struct{ State, Region string }) {
	t.Helper()
	resp, err := http.Get(apiURL + "/v1/allocations/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&inst)
	return inst
}
