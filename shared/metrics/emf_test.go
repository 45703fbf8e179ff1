package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestEmitIsEMF(t *testing.T) {
	var buf bytes.Buffer
	e := NewEMF(&buf)
	e.now = func() time.Time { return time.UnixMilli(1700000000000) }
	e.Emit(map[string]string{"Region": "us-west", "Outcome": "Allocated"}, Metric{"UpstreamLatency", 42, "Milliseconds"})
	var doc struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Region          string
		UpstreamLatency float64
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %q", buf.String())
	}
	m := doc.AWS.CloudWatchMetrics[0]
	if doc.AWS.Timestamp != 1700000000000 || m.Namespace != Namespace || strings.Join(m.Dimensions[0], ",") != "Outcome,Region" ||
		m.Metrics[0].Name != "UpstreamLatency" || m.Metrics[0].Unit != "Milliseconds" || doc.UpstreamLatency != 42 || doc.Region != "us-west" {
		t.Fatalf("EMF = %s", buf.String())
	}
	if strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("want one line, got %q", buf.String())
	}
}

func TestAllocationMetrics(t *testing.T) {
	var buf bytes.Buffer
	Allocations{EMF: NewEMF(&buf)}.Allocated(allocation.Outcome{
		Record: gameinstance.Record{State: gameinstance.StateAllocated, FallbackUsed: true, Region: "eu",
			Attempts: []gameinstance.Attempt{{Region: "us-west", Status: 0, DurationMs: 300, SuspectedOrphan: true},
				{Region: "made-up-by-a-caller", Status: 503, DurationMs: 12}, {Region: "eu", Status: 200, DurationMs: 30}}},
		SkippedUnhealthy: 1, SuspectedOrphans: []string{"us-west"}, Known: map[string]bool{"us-west": true, "eu": true},
		Duration: 345 * time.Millisecond})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{`"Allocations":1`, `"Outcome":"Allocated"`, `"FallbacksUsed":1`, `"AttemptsPerAllocation":3`, `"RegionsSkippedUnhealthy":1`,
		`"SuspectedOrphans":1`, `"Region":"us-west","SuspectedOrphans":1`, `"Region":"us-west","UpstreamLatency":300`,
		`"Region":"other","UpstreamLatency":12`, `"SuspectedOrphans":1,"UpstreamLatency":30,"_aws"`,
		`"Dimensions":[["Region"]],"Metrics":[{"Name":"UpstreamLatency","Unit":"Milliseconds"}]}],"Timestamp"`,
		`"Outcome":"Allocated","Region":"eu"`, `"AllocationLatency":345`, `"AllocationFailed":0`, `"NoCapacity":0`,
		`"Dimensions":[["Outcome"],["Outcome","Region"]],"Metrics":[{"Name":"Allocations","Unit":"Count"}]`,
		`"Dimensions":[[],["Region"]],"Metrics":[{"Name":"AllocationLatency","Unit":"Milliseconds"},{"Name":"RoomPlacements","Unit":"Count"}]`,
		`"RoomPlacements":0`}
	for _, w := range want {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("metrics lack %s:\n%s", w, buf.String())
		}
	}
	if strings.Contains(buf.String(), "made-up") {
		t.Errorf("an unknown region became a dimension:\n%s", buf.String())
	}
	// One line for the allocation (with the latency of the attempt that
	// placed it, in its region), one per region with suspected orphans, one
	// per other attempt's latency.
	if len(lines) != 4 || !strings.Contains(lines[0], `"UpstreamLatency":30`) {
		t.Errorf("%d lines, want 4, the first with the placing attempt's latency", len(lines))
	}
}

// A session placed in a room counts as a room placement in its region; its
// callbacks are room callbacks, not GameFabric's latency.
func TestRoomPlacementMetrics(t *testing.T) {
	var buf bytes.Buffer
	Allocations{EMF: NewEMF(&buf)}.Allocated(allocation.Outcome{
		Record: gameinstance.Record{State: gameinstance.StateAllocated, Region: "eu", Placement: gameinstance.PlacementRoom,
			Attempts: []gameinstance.Attempt{{Region: "eu", Status: 503, DurationMs: 4, Placement: gameinstance.PlacementRoom, Server: "10.0.0.1:7777"},
				{Region: "eu", Status: 200, DurationMs: 3, Placement: gameinstance.PlacementRoom, Server: "10.0.0.2:7777"}}},
		Known: map[string]bool{"eu": true}, Duration: 9 * time.Millisecond})
	for _, w := range []string{`"RoomPlacements":1`, `"Dimensions":[[],["Region"]],"Metrics":[{"Name":"AllocationLatency","Unit":"Milliseconds"},{"Name":"RoomPlacements","Unit":"Count"}]`, `"Region":"eu","RoomCallbackLatency":4`, `"RegionsSkippedUnhealthy":0,"RoomCallbackLatency":3,"RoomPlacements":1`} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("metrics lack %s:\n%s", w, buf.String())
		}
	}
	if strings.Contains(buf.String(), "UpstreamLatency") {
		t.Errorf("a room callback counted as GameFabric's latency:\n%s", buf.String())
	}
}

func TestFailedAllocationMetrics(t *testing.T) {
	var buf bytes.Buffer
	Allocations{EMF: NewEMF(&buf)}.Allocated(allocation.Outcome{Record: gameinstance.Record{State: gameinstance.StateFailed,
		Failure: &gameinstance.Failure{Code: gameinstance.CodeNoCapacity}}})
	for _, w := range []string{`"NoCapacity":1,"Outcome":"NO_CAPACITY","Region":"none"`, `"AllocationFailed":1`, `"NoCapacity":1`} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("metrics lack %s:\n%s", w, buf.String())
		}
	}
}

func TestEventMetrics(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	linked := func(allocated, linked time.Time, recovered bool) gameinstance.Record {
		return gameinstance.Record{GameInstanceID: "g", State: gameinstance.StateLinked, UpdatedAt: linked, LinkedAt: linked, RecoveredByLink: recovered}
	}
	var evs []eventcatalog.Event
	evs = append(evs, eventcatalog.FromGameInstance(&gameinstance.Record{State: gameinstance.StateAllocated, UpdatedAt: at}, linked(at, at.Add(1500*time.Millisecond), false))...)
	evs = append(evs, eventcatalog.FromGameInstance(&gameinstance.Record{State: gameinstance.StateAllocating, UpdatedAt: at}, linked(at, at.Add(time.Hour), true))...)
	for _, reason := range []string{gameinstance.ReasonLinkTimeout, gameinstance.ReasonMissedHeartbeats, gameinstance.ReasonMissedHeartbeats} {
		evs = append(evs, eventcatalog.FromGameInstance(&gameinstance.Record{State: gameinstance.StateLinked},
			gameinstance.Record{State: gameinstance.StateUnhealthy, UnhealthyReason: reason})...)
	}
	Events{EMF: NewEMF(&buf)}.Published(evs, 2)
	out := buf.String()
	for _, w := range []string{`"EventsPublished":5`, `"EventsPublishFailed":2`, `"LinkTime":1500`,
		`"GameInstancesUnhealthy":1,"Reason":"LinkTimeout"`, `"GameInstancesUnhealthy":2,"Reason":"MissedHeartbeats"`} {
		if !strings.Contains(out, w) {
			t.Errorf("metrics lack %s:\n%s", w, out)
		}
	}
	if strings.Count(out, `"LinkTime":`) != 1 {
		t.Errorf("a link the server recovered has no link time:\n%s", out)
	}
}

// The hand-built line is what encoding/json makes of the same document.
func TestEmitGroupsIsWhatEncodingJSONWrites(t *testing.T) {
	type def struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	type directive struct {
		Namespace  string     `json:"Namespace"`
		Dimensions [][]string `json:"Dimensions"`
		Metrics    []def      `json:"Metrics"`
	}
	dims := map[string]string{"Region": "us-\"west\"\\\n\t<a&b>\f", "Outcome": "Allocated\x01\b\r"}
	groups := []Group{{DimensionSets: [][]string{{"Outcome"}, {"Outcome", "Region"}}, Metrics: []Metric{{"Allocations", 1, "Count"}}},
		{}, {DimensionSets: [][]string{nil}, Metrics: []Metric{{"Latency", 12.5, "Milliseconds"}, {"Big", 1e22, "Count"}, {"Small", -0.000001, "Count"}, {"Tiny", 1.5e-9, "Count"}}}}
	var buf bytes.Buffer
	e := NewEMF(&buf)
	e.now = func() time.Time { return time.UnixMilli(1700000000123) }
	e.EmitGroups(dims, groups...)
	doc := map[string]any{}
	for k, v := range dims {
		doc[k] = v
	}
	var ds []directive
	for _, g := range groups {
		if len(g.Metrics) == 0 {
			continue
		}
		d := directive{Namespace: Namespace, Dimensions: [][]string{}}
		for _, set := range g.DimensionSets {
			d.Dimensions = append(d.Dimensions, append([]string{}, set...))
		}
		for _, m := range g.Metrics {
			d.Metrics, doc[m.Name] = append(d.Metrics, def{m.Name, m.Unit}), m.Value
		}
		ds = append(ds, d)
	}
	doc["_aws"] = map[string]any{"Timestamp": int64(1700000000123), "CloudWatchMetrics": ds}
	want, _ := json.Marshal(doc)
	if got := strings.TrimSuffix(buf.String(), "\n"); got != string(want) {
		t.Fatalf("line\n got %s\nwant %s", got, want)
	}
}
