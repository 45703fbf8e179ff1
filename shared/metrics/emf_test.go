package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
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
		Record: gameinstance.Record{State: gameinstance.StateAllocated, FallbackUsed: true,
			Attempts: []gameinstance.Attempt{{Region: "us-west", Status: 0, DurationMs: 300, SuspectedOrphan: true},
				{Region: "made-up-by-a-caller", Status: 503, DurationMs: 12}, {Region: "eu", Status: 200, DurationMs: 30}}},
		SkippedUnhealthy: 1, SuspectedOrphans: []string{"us-west"}, Known: map[string]bool{"us-west": true, "eu": true}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{`"Allocations":1`, `"Outcome":"Allocated"`, `"FallbacksUsed":1`, `"AttemptsPerAllocation":3`, `"RegionsSkippedUnhealthy":1`,
		`"SuspectedOrphans":1`, `"Region":"us-west","SuspectedOrphans":1`, `"Region":"us-west","UpstreamLatency":300`,
		`"Region":"other","UpstreamLatency":12`, `"Region":"eu","UpstreamLatency":30`}
	for _, w := range want {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("metrics lack %s:\n%s", w, buf.String())
		}
	}
	if strings.Contains(buf.String(), "made-up") {
		t.Errorf("an unknown region became a dimension:\n%s", buf.String())
	}
	if len(lines) != 6 {
		t.Errorf("%d lines, want 6", len(lines))
	}
}
