//go:build integration

package stack

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/local/asyncinvoke"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// matchFunction stands in for MatchmakingFunction: it fails every match
// whose id starts with "fail-", as a function whose store is down would.
type matchFunction struct {
	mu     sync.Mutex
	events []eventSeen
}

type eventSeen struct {
	Source     string   `json:"source"`
	DetailType string   `json:"detail-type"`
	Resources  []string `json:"resources"`
	Detail     struct {
		Type    string `json:"type"`
		MatchID string `json:"matchId"`
	} `json:"detail"`
}

func (f *matchFunction) Invoke(_ context.Context, event []byte) ([]byte, error) {
	var ev eventSeen
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.mu.Unlock()
	if len(ev.Detail.MatchID) > 5 && ev.Detail.MatchID[:5] == "fail-" {
		return []byte(`{"errorMessage":"store down","errorType":"errorString"}`), errors.New("errorString: store down")
	}
	return []byte("null"), nil
}

func (f *matchFunction) calls(matchID string) (n int, last eventSeen) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range f.events {
		if ev.Detail.MatchID == matchID {
			n, last = n+1, ev
		}
	}
	return n, last
}

// The repo template's MatchmakingRule, created on moto's default bus with
// FlexMatchIntegration=true (the local default): a MatchmakingSucceeded
// event put there reaches MatchmakingFunction once; a failing function's
// event is invoked 1 + 2 times and then lands in MatchmakingDeadLetterQueue
// as Lambda's on-failure record; other matchmaking events reach nothing.
func TestMatchmakingRuleOnTheDefaultBus(t *testing.T) {
	c, ctx := startDefaultComponents(t)
	fn := &matchFunction{}
	invoker := func(name string) (asyncinvoke.Invoker, int, error) {
		if name != "MatchmakingFunction" {
			t.Errorf("rule target %s, want MatchmakingFunction", name)
		}
		return fn, 2, nil
	}
	pollers, err := c.StartRules(ctx, c.Refs(Defaults(), "http://127.0.0.1:1"), invoker,
		RuleTuning{RetryDelay: 50 * time.Millisecond, WaitTime: time.Second}, &testkit.SyncBuffer{})
	if err != nil || len(pollers) != 1 {
		t.Fatalf("StartRules = %d pollers, %v; want MatchmakingRule's one target", len(pollers), err)
	}
	t.Cleanup(func() { _ = pollers[0].Stop() })

	ok, err := c.PutMatch(ctx, MatchOptions{Players: 2})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 20*time.Second, "the match delivered to MatchmakingFunction", func() bool { n, _ := fn.calls(ok); return n == 1 })
	_, ev := fn.calls(ok)
	if ev.Source != "aws.gamelift" || ev.DetailType != "GameLift Matchmaking Event" || ev.Detail.Type != "MatchmakingSucceeded" || len(ev.Resources) != 1 {
		t.Errorf("delivered %+v", ev)
	}

	if _, err := c.PutMatch(ctx, MatchOptions{Players: 2, MatchID: "fail-1"}); err != nil {
		t.Fatal(err)
	}
	bodies, err := c.ReadQueue(ctx, "MatchmakingDeadLetterQueue", 20*time.Second)
	if err != nil || len(bodies) != 1 {
		t.Fatalf("MatchmakingDeadLetterQueue holds %d records (%v), want 1", len(bodies), err)
	}
	var rec struct {
		RequestContext struct {
			FunctionArn, Condition string
			ApproximateInvokeCount int
		} `json:"requestContext"`
		RequestPayload  eventSeen         `json:"requestPayload"`
		ResponsePayload map[string]string `json:"responsePayload"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if n, _ := fn.calls("fail-1"); n != 3 || rec.RequestContext.ApproximateInvokeCount != 3 || rec.RequestContext.Condition != "RetriesExhausted" ||
		rec.RequestContext.FunctionArn != FunctionARN("MatchmakingFunction")+":$LATEST" || rec.RequestPayload.Detail.MatchID != "fail-1" ||
		rec.ResponsePayload["errorMessage"] != "store down" {
		t.Errorf("after %d invocations the record is %s", n, bodies[0])
	}

	other := `{"type":"MatchmakingFailed","matchId":"other-1"}`
	if _, err := c.EventBridge().PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{Source: aws.String(MatchSource),
		DetailType: aws.String(MatchDetailType), Detail: aws.String(other), EventBusName: aws.String("default")}}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // a poll or two
	if n, _ := fn.calls("other-1"); n != 0 {
		t.Errorf("a MatchmakingFailed event was delivered %d times", n)
	}
}
