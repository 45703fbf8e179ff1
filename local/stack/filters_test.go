package stack

import (
	"encoding/json"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/streams"
	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// template.yaml's FilterCriteria pass exactly the stream records of which
// the event catalogue makes an event: none is lost to a filter, and no
// write that makes none (a claim, a heartbeat, a region that stays as it
// was) invokes EventsFunction -- but a rare rewrite of a game instance in
// the same final or Allocated state, which a filter cannot tell from an
// arrival (patterns cannot compare two fields). Every pair is tried.
func TestTemplateFiltersPassExactlyTheEvents(t *testing.T) {
	tpl, err := LoadTemplate("../..")
	if err != nil {
		t.Fatal(err)
	}
	sources, err := tpl.DynamoDBEventSources(map[string]string{"EventsMaxRetryAttempts": "5"})
	if err != nil {
		t.Fatal(err)
	}
	filters := map[string]*streams.Filter{}
	for _, src := range sources {
		if filters[src.TableLogicalID], err = streams.CompileFilter(src.Filters); err != nil {
			t.Fatal(err)
		}
	}
	instanceStates := []string{"", "Allocating", "Queued", "Allocated", "Failed", "Linked", "Ended", "Unhealthy"}
	regionStates := []string{"", "Initialized", "Deployed", "Unhealthy"}
	for _, old := range instanceStates {
		for _, cur := range instanceStates[1:] {
			var before *gameinstance.Record
			if old != "" {
				before = &gameinstance.Record{GameInstanceID: "gi", State: gameinstance.State(old)}
			}
			events := eventcatalog.FromGameInstance(before, gameinstance.Record{GameInstanceID: "gi", State: gameinstance.State(cur)})
			rewrite := old == cur && cur != "Linked"
			check(t, filters["GameInstancesTable"], "gameInstanceId", old, cur, len(events) > 0, rewrite)
		}
	}
	for _, old := range regionStates {
		for _, cur := range regionStates[1:] {
			var before *regionhealth.Health
			if old != "" {
				before = &regionhealth.Health{Region: "r", State: regionhealth.RegionState(old)}
			}
			events := eventcatalog.FromRegion(before, regionhealth.Health{Region: "r", State: regionhealth.RegionState(cur)})
			check(t, filters["RegionHealthTable"], "region", old, cur, len(events) > 0, false)
		}
	}
}

func check(t *testing.T, f *streams.Filter, key, old, cur string, want, mayPass bool) {
	t.Helper()
	if f == nil {
		t.Fatalf("no filter for the table keyed by %s", key)
	}
	img := func(state string) map[string]any {
		return map[string]any{key: map[string]any{"S": "x"}, "state": map[string]any{"S": state}}
	}
	r := streams.Record{EventName: "MODIFY", DynamoDB: streams.StreamRecord{Keys: map[string]any{key: map[string]any{"S": "x"}}, NewImage: img(cur)}}
	if old == "" {
		r.EventName = "INSERT"
	} else {
		r.DynamoDB.OldImage = img(old)
	}
	// Through JSON, as Lambda matches the record it would deliver.
	b, _ := json.Marshal(r)
	var back streams.Record
	_ = json.Unmarshal(b, &back)
	got, err := f.Match(back)
	if err != nil {
		t.Fatal(err)
	}
	if got != want && !(got && mayPass) {
		t.Errorf("%s %s: %s → %s passes the filter: %v, but makes an event: %v", r.EventName, key, old, cur, got, want)
	}
}
