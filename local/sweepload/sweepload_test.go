package sweepload

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
)

func TestLambdaTimeoutIsTheTemplates(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Resources map[string]struct {
			Properties struct {
				Timeout int `yaml:"Timeout"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(tpl.Resources["HealthSweepFunction"].Properties.Timeout) * time.Second; got != LambdaTimeout {
		t.Fatalf("HealthSweepFunction's Timeout is %s in template.yaml, LambdaTimeout %s", got, LambdaTimeout)
	}
}

func TestSeededRecordsAreDueAndMarked(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	p := lifecycle.DefaultPolicy
	for _, tc := range []struct {
		linked bool
		reason string
	}{{false, gameinstance.ReasonLinkTimeout}, {true, gameinstance.ReasonMissedHeartbeats}} {
		rec := dueRecord("gi", tc.linked, p, now)
		if rec.HealthDeadline.After(now) {
			t.Errorf("linked=%v: index deadline %s is after %s", tc.linked, rec.HealthDeadline, now)
		}
		next, changed := p.Review(rec, now)
		if !changed || next.State != gameinstance.StateUnhealthy || next.UnhealthyReason != tc.reason {
			t.Errorf("linked=%v: Review = %s/%s, want Unhealthy/%s", tc.linked, next.State, next.UnhealthyReason, tc.reason)
		}
		// The index entry is exactly where Review puts the deadline: no
		// run spends a write moving it.
		early, _ := p.Review(rec, rec.HealthDeadline.Add(-time.Millisecond))
		if !early.HealthDeadline.Equal(rec.HealthDeadline) {
			t.Errorf("linked=%v: index deadline %s, Review's %s", tc.linked, rec.HealthDeadline, early.HealthDeadline)
		}
	}
}
