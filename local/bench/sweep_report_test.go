package bench

import (
	"strings"
	"testing"
	"time"
)

func TestSweepSectionReportsTheRuns(t *testing.T) {
	r := &Report{Sweep: SweepResult{Instances: 20000, RunTimeout: time.Minute, SeedTook: 9 * time.Second, Took: 40 * time.Second,
		States: map[string]int{"Unhealthy/LinkTimeout": 16000, "Unhealthy/MissedHeartbeats": 4000},
		Runs: []SweepRun{
			{FirstShard: 11, TakenOn: 10000, Reviewed: 10000, Marked: 10000, Took: 24 * time.Second, PerSecond: 417, MinShard: 625, MaxShard: 625},
			{FirstShard: 12, TakenOn: 10000, Reviewed: 10000, Marked: 10000, Took: 16 * time.Second, PerSecond: 625, MinShard: 613, MaxShard: 635},
		}}}
	var b strings.Builder
	r.sweepMD(&b)
	md := b.String()
	for _, want := range []string{"## Health sweep backlog", "| 2 | 12 | 10000 | 10000 | 16s | 625 | 613–635 | no | 0 | 0 |",
		"**2 runs** marked the 20000 instances", "Unhealthy/LinkTimeout ×16000, Unhealthy/MissedHeartbeats ×4000",
		"**0 runs left a shard with due instances untouched**", "fewer than 185 a second"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	rows := r.sweepRows()
	if len(rows) != 1 || rows[0].Measured != "2 runs (10000 + 10000; 417–625 reviews/s); 0 starved a shard" || rows[0].Met == nil || !*rows[0].Met {
		t.Fatalf("summary rows = %+v", rows)
	}
	r.Sweep.Runs[1].Starved = 3
	if rows := r.sweepRows(); *rows[0].Met {
		t.Fatal("a run that starved shards still meets the goal")
	}
	if (&Report{}).sweepRows() != nil {
		t.Fatal("a skipped phase has a summary row")
	}
}
