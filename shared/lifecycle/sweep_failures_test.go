package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

func TestSweepStopsBeforeItsDeadline(t *testing.T) {
	f := newFakeStore(16)
	for sh := range 16 {
		f.addDue(sh, 200, sweepT0)
	}
	f.getDelay = 5 * time.Millisecond // 3,200 reviews ÷ 4 workers ≈ 4 s: far more than the run has
	s := fakeService(f, sweepT0.Add(time.Hour))
	const timeout, margin = 600 * time.Millisecond, 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	began := time.Now()
	sum, err := s.sweep(quiet(ctx), sweepLimits{capacity: SweepLimit, workers: 4, minMargin: margin})
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	// Dispatch stops at timeout-margin; in-flight reviews may run on to
	// timeout-margin/2 at most, and here last one Get (5 ms).
	if took > timeout-margin/2 {
		t.Fatalf("the run took %s, past its stop (%s before the %s deadline)", took, margin/2, timeout)
	}
	if took < timeout-margin-50*time.Millisecond {
		t.Fatalf("the run stopped after %s, well before its stop at %s", took, timeout-margin)
	}
	if !sum.StoppedEarly || sum.Remaining == 0 || sum.Reviewed+sum.Remaining != sum.Due || sum.Due != 3200 {
		t.Fatalf("summary = %+v; want stopped early with the rest counted as remaining", sum)
	}
	if sum.Failures != 0 || sum.Marked != sum.Reviewed {
		t.Fatalf("in-flight reviews were cut off: %+v", sum)
	}
	// Dispatch interleaves the shards, so a run cut short still reviewed
	// every shard about equally.
	lo, hi := sum.ReviewedByShard[0], sum.ReviewedByShard[0]
	for _, n := range sum.ReviewedByShard {
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo == 0 || hi-lo > 1 {
		t.Fatalf("reviewed by shard = %v; want every shard within one of the others", sum.ReviewedByShard)
	}
}

func TestSweepWithoutTimeLeftDoesNothingAndSaysSo(t *testing.T) {
	f := newFakeStore(4)
	f.addDue(0, 3, sweepT0)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	sum, err := fakeService(f, sweepT0.Add(time.Hour)).sweep(quiet(ctx), sweepLimits{capacity: 10, workers: 2, minMargin: time.Second})
	if err != nil || sum.Reviewed != 0 || !sum.StoppedEarly || !sum.MoreDue {
		t.Fatalf("sweep = %+v, %v; want nothing done, stopped early, more due", sum, err)
	}
}

func TestSweepIsolatesFailingInstances(t *testing.T) {
	f := newFakeStore(4)
	var ids []string
	for sh := range 4 {
		ids = append(ids, f.addDue(sh, 10, sweepT0)...)
	}
	tests := []struct {
		name  string
		setup func(id string)
	}{
		{"store error", func(id string) { f.getErr[id] = errStoreDown }},
		{"undecodable record", func(id string) { f.getErr[id] = fmt.Errorf("decode record: %w", errors.New("bad attribute")) }},
		{"panic", func(id string) { f.panicOn[id] = true }},
		{"conflicts past the retries", func(id string) { f.conflict[id] = true }},
	}
	bad := map[string]bool{}
	for i, tc := range tests {
		tc.setup(ids[i*7])
		bad[ids[i*7]] = true
	}
	f.getErr[ids[1]] = gameinstance.ErrNotFound // deleted since the index listed it: not a failure
	logs := &bytes.Buffer{}
	ctx := logging.WithLogger(context.Background(), logging.New(logs, slog.LevelError))
	sum, err := fakeService(f, sweepT0.Add(time.Hour)).sweep(ctx, sweepLimits{capacity: 100, workers: 4, minMargin: time.Second})
	if err != nil {
		t.Fatalf("per-instance failures failed the run: %v", err)
	}
	if n := strings.Count(logs.String(), "reviewing a game instance failed"); n != len(tests) {
		t.Errorf("%d failures logged, want %d:\n%s", n, len(tests), logs)
	}
	for id := range bad {
		if !strings.Contains(logs.String(), `"gameInstanceId":"`+id+`"`) {
			t.Errorf("the failure of %s is not logged with its id", id)
		}
	}
	if sum.Failures != len(tests) || sum.Reviewed != 40 || sum.Marked != 40-len(tests)-1 {
		t.Fatalf("summary = %+v; want %d failures, the rest marked", sum, len(tests))
	}
	for _, id := range ids {
		if want := gameinstance.StateUnhealthy; id != ids[1] && !bad[id] && f.state(id) != want {
			t.Errorf("%s is %s, want %s", id, f.state(id), want)
		}
	}
}

func TestSweepGoesOnWhenAShardQueryFails(t *testing.T) {
	tests := []struct {
		name    string
		failing []int
		wantErr bool
	}{
		{"one shard down", []int{2}, false},
		{"all but one down", []int{0, 1, 3}, false},
		{"every shard down: an outage", []int{0, 1, 2, 3}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeStore(4)
			for sh := range 4 {
				f.addDue(sh, 5, sweepT0)
			}
			for _, sh := range tc.failing {
				f.dueErr[sh] = errStoreDown
			}
			sum, err := fakeService(f, sweepT0.Add(time.Hour)).sweep(quiet(context.Background()), sweepLimits{capacity: 100, workers: 2, minMargin: time.Second})
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, errStoreDown)) {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if want := 5 * (4 - len(tc.failing)); sum.ShardFailures != len(tc.failing) || sum.Marked != want {
				t.Fatalf("summary = %+v; want %d shard failures and %d marked", sum, len(tc.failing), want)
			}
		})
	}
}

// Run after run, a skewed backlog drains without starving any shard: every
// run reviews some of every shard that still has due instances.
func TestSweepRunsDrainASkewedBacklogFairly(t *testing.T) {
	f := newFakeStore(16)
	f.addDue(0, 3000, sweepT0)
	for sh := 1; sh < 16; sh++ {
		f.addDue(sh, 40*sh, sweepT0)
	}
	total, runs := 3000+40*120, 0
	for marked := 0; marked < total; runs++ {
		if runs == 20 {
			t.Fatalf("%d of %d marked after %d runs", marked, total, runs)
		}
		now := sweepT0.Add(time.Hour + time.Duration(runs)*time.Minute)
		before := make([]int, 16)
		for sh := range 16 {
			ids, _, _ := f.Due(context.Background(), sh, now, 1<<30, "")
			before[sh] = len(ids)
		}
		sum, err := fakeService(f, now).sweep(quiet(context.Background()), sweepLimits{capacity: 1000, workers: 8, minMargin: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for sh := range 16 {
			if before[sh] > 0 && sum.ReviewedByShard[sh] == 0 {
				t.Fatalf("run %d: shard %d had %d due and got none: %v", runs, sh, before[sh], sum.ReviewedByShard)
			}
		}
		marked += sum.Marked
	}
	// 7,800 at 1,000 a run: 8 runs, no more.
	if runs != 8 {
		t.Fatalf("drained in %d runs, want 8", runs)
	}
}
