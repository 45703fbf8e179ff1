package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// sweepT0 is minute 0 mod 16 of the epoch, so runs start at shard
// sweepT0+k minutes → shard k.
var sweepT0 = time.Unix(1_700_000_000/960*960, 0).UTC()

func fakeService(f *fakeStore, now time.Time) *Service {
	return &Service{Store: f, Policy: DefaultPolicy, Now: func() time.Time { return now }}
}

func TestFirstShardRotatesWithTheMinute(t *testing.T) {
	tests := []struct {
		at   time.Duration
		want int
	}{
		{0, 0}, {59 * time.Second, 0}, {time.Minute, 1}, {15 * time.Minute, 15}, {16 * time.Minute, 0}, {17*time.Minute + 30*time.Second, 1},
	}
	for _, tc := range tests {
		if got := firstShard(sweepT0.Add(tc.at), 16); got != tc.want {
			t.Errorf("firstShard(t0+%s) = %d, want %d", tc.at, got, tc.want)
		}
	}
	// Sixteen consecutive minutes start at sixteen different shards.
	seen := map[int]bool{}
	for m := range 16 {
		seen[firstShard(sweepT0.Add(time.Duration(100+m)*time.Minute), 16)] = true
	}
	if len(seen) != 16 {
		t.Fatalf("16 consecutive runs started at %d distinct shards", len(seen))
	}
}

func TestFindDueSharesCapacityFairly(t *testing.T) {
	tests := []struct {
		name     string
		backlog  []int // due instances per shard (4 shards)
		capacity int
		first    int
		want     []int
		more     bool
	}{
		{"even backlogs split evenly", []int{500, 500, 500, 500}, 400, 0, []int{100, 100, 100, 100}, true},
		{"remainder goes to the first in rotation", []int{500, 500, 500, 500}, 402, 2, []int{100, 100, 101, 101}, true},
		{"a huge backlog does not starve the others", []int{100000, 7, 3, 0}, 400, 0, []int{390, 7, 3, 0}, true},
		{"leftover goes round-robin to the full shards", []int{1000, 1000, 10, 0}, 400, 3, []int{195, 195, 10, 0}, true},
		{"everything fits", []int{30, 20, 10, 0}, 400, 1, []int{30, 20, 10, 0}, false},
		{"exactly the capacity", []int{100, 100, 100, 100}, 400, 0, []int{100, 100, 100, 100}, false},
		{"capacity below the shard count", []int{9, 9, 9, 9}, 2, 3, []int{1, 0, 0, 1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeStore(len(tc.backlog))
			for sh, n := range tc.backlog {
				f.addDue(sh, n, sweepT0)
			}
			found := fakeService(f, sweepT0).findDue(context.Background(), sweepT0, tc.first, len(tc.backlog), tc.capacity, newWatchCache(len(tc.backlog), 100))
			got, more := make([]int, len(found)), false
			for sh, d := range found {
				got[sh], more = len(d.ids), more || d.open
				if !slices.Equal(d.ids, f.shards[sh][:len(d.ids)]) {
					t.Errorf("shard %d: not its oldest due instances in order", sh)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("taken per shard = %v, want %v", got, tc.want)
			}
			// A shard is listed a page at a time, so "exactly the capacity"
			// knows its shards are empty.
			if more != tc.more {
				t.Errorf("more = %v, want %v", more, tc.more)
			}
			if q := f.queries.Load(); q > int64(len(tc.backlog)*(len(tc.backlog)+1)) {
				t.Errorf("%d queries: more rounds than shards+1", q)
			}
		})
	}
}

func TestInterleaveRoundRobinFromTheFirstShard(t *testing.T) {
	found := []dueShard{{ids: []string{"a0", "a1", "a2"}}, {ids: nil}, {ids: []string{"c0"}}, {ids: []string{"d0", "d1"}}}
	var got []string
	for _, it := range interleave(found, 2) {
		got = append(got, fmt.Sprintf("%s@%d", it.id, it.shard))
	}
	want := []string{"c0@2", "d0@3", "a0@0", "d1@3", "a1@0", "a2@0"}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestSweepReviewsConcurrentlyAndCountsRaceFree(t *testing.T) {
	f := newFakeStore(16)
	for sh := range 16 {
		f.addDue(sh, 25, sweepT0)
	}
	f.getDelay = 2 * time.Millisecond
	regions := &countRegions{}
	s := fakeService(f, sweepT0.Add(3*time.Minute))
	s.Regions = regions
	sum, err := s.sweep(quiet(context.Background()), sweepLimits{capacity: 1000, workers: 8, minMargin: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Due != 400 || sum.Reviewed != 400 || sum.Marked != 400 || sum.LinkTimeouts != 400 || sum.Remaining != 0 || sum.StoppedEarly || sum.MoreDue {
		t.Fatalf("summary = %+v", sum)
	}
	if sum.FirstShard != 3 {
		t.Errorf("first shard = %d, want 3 (minute 3)", sum.FirstShard)
	}
	for sh, n := range sum.ReviewedByShard {
		if n != 25 {
			t.Errorf("shard %d: reviewed %d, want 25", sh, n)
		}
	}
	if m := f.maxIn.Load(); m < 2 || m > 8 {
		t.Errorf("%d reviews in flight at most, want 2..8 (8 workers)", m)
	}
	if regions.n["r1"] != 400 {
		t.Errorf("region heard of %d link timeouts, want 400", regions.n["r1"])
	}
	for id := range f.recs {
		if f.state(id) != gameinstance.StateUnhealthy {
			t.Fatalf("%s is %s", id, f.state(id))
		}
	}
	// The summary keeps its existing JSON fields next to the new ones.
	raw, _ := json.Marshal(sum)
	var fields map[string]any
	_ = json.Unmarshal(raw, &fields)
	for _, k := range []string{"due", "marked", "linkTimeouts", "missedHeartbeats", "outcomesLost", "moved",
		"reviewed", "reviewedByShard", "failures", "shardFailures", "remaining", "stoppedEarly", "moreDue", "firstShard"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("summary JSON lacks %q: %s", k, raw)
		}
	}
}
