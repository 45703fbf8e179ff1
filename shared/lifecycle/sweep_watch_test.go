package lifecycle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// liveGames are Linked instances whose servers heartbeat every Period, each
// at its own offset, until stop (zero: all along).
type liveGames struct {
	f        *fakeStore
	linkedAt time.Time
	offsets  map[string]time.Duration
	stop     map[string]time.Time
}

func newLiveGames(f *fakeStore, linkedAt time.Time, perShard int) *liveGames {
	g := &liveGames{f: f, linkedAt: linkedAt, offsets: map[string]time.Duration{}, stop: map[string]time.Time{}}
	p := DefaultPolicy
	for sh := range f.shards {
		for i := range perShard {
			id := fmt.Sprintf("live-%02d-%03d", sh, i)
			f.recs[id] = gameinstance.Record{GameInstanceID: id, State: gameinstance.StateLinked, Version: 1, LinkedAt: linkedAt,
				UpdatedAt: linkedAt, HealthDeadline: linkedAt.Add(p.InitialDelay + p.Period*time.Duration(p.FailureThreshold))}
			f.shards[sh] = append(f.shards[sh], id)
			g.offsets[id] = time.Duration(sh*perShard+i) * 997 * time.Millisecond % p.Period
		}
	}
	return g
}

// beatUntil stores each live instance's last heartbeat at or before now,
// as the link-back function would have; it returns that of id.
func (g *liveGames) beatUntil(now time.Time) {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	for id, off := range g.offsets {
		r := g.f.recs[id]
		last := now
		if s := g.stop[id]; !s.IsZero() && s.Before(now) {
			last = s
		}
		if r.State != gameinstance.StateLinked || last.Before(g.linkedAt.Add(off)) {
			continue
		}
		beats := last.Sub(g.linkedAt.Add(off)) / DefaultPolicy.Period
		r.LastHeartbeatAt = g.linkedAt.Add(off + beats*DefaultPolicy.Period)
		g.f.recs[id] = r
	}
}

// A warm sweep reads a live instance about every other run, a cold one
// every run; both mark an instance whose heartbeats stopped at the first
// run past its deadline, and no other.
func TestSweepReadsLiveInstancesOnlyWhenTheyCouldBeOverdue(t *testing.T) {
	for _, warm := range []bool{true, false} {
		t.Run(fmt.Sprintf("warm=%v", warm), func(t *testing.T) {
			f := newFakeStore(4)
			g := newLiveGames(f, sweepT0.Add(-10*time.Second), 25)
			dead := "live-02-007"
			g.stop[dead] = sweepT0.Add(7*time.Minute + 10*time.Second)
			s := fakeService(f, sweepT0)
			var markedAt time.Time
			const runs = 20
			for m := range runs + 1 {
				now := sweepT0.Add(time.Duration(m) * time.Minute)
				g.beatUntil(now)
				if !warm {
					s = fakeService(f, now)
				}
				s.Now = func() time.Time { return now }
				sum, err := s.sweep(quiet(context.Background()), sweepLimits{capacity: 1000, workers: 4, minMargin: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if sum.Marked > 0 {
					if sum.Marked != 1 || sum.MissedHeartbeats != 1 || f.state(dead) != gameinstance.StateUnhealthy || !markedAt.IsZero() {
						t.Fatalf("run at +%dm marked %d (%+v); want only %s, once", m, sum.Marked, sum, dead)
					}
					markedAt = now
				}
				if sum.Moved != 0 {
					t.Fatalf("run at +%dm moved %d index entries of live instances", m, sum.Moved)
				}
			}
			last := f.recs[dead].LastHeartbeatAt
			deadline := DefaultPolicy.heartbeatDeadline(f.recs[dead])
			if markedAt.Before(deadline) || !markedAt.Before(deadline.Add(time.Minute)) {
				t.Fatalf("last heartbeat %v, deadline %v: marked at %v, want the first run past the deadline", last, deadline, markedAt)
			}
			// Listed from +2m (the link's key): 19 runs.
			for id, n := range f.reads {
				want, most := 19, 19
				if warm {
					want, most = 9, 11
				}
				if id == dead {
					continue
				}
				if n < want || n > most {
					t.Errorf("%s read %d times in %d runs, want %d..%d", id, n, runs+1, want, most)
				}
			}
		})
	}
}

// The cache trusts what it read only under the same index key: a new
// incarnation of an id, or an entry whose record changed its key, is read
// again; and it forgets instances that left the index.
func TestWatchCacheTrustsOnlyTheSameKey(t *testing.T) {
	f := newFakeStore(1)
	g := newLiveGames(f, sweepT0.Add(-2*time.Minute), 3)
	g.beatUntil(sweepT0)
	s := fakeService(f, sweepT0)
	run := func(at time.Time) SweepSummary {
		s.Now = func() time.Time { return at }
		sum, err := s.sweep(quiet(context.Background()), sweepLimits{capacity: 100, workers: 2, minMargin: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if sum := run(sweepT0); sum.Listed != 3 || sum.Checked != 3 || sum.Due != 0 {
		t.Fatalf("first run: %+v", sum)
	}
	g.beatUntil(sweepT0.Add(time.Minute))
	if sum := run(sweepT0.Add(time.Minute)); sum.Listed != 3 || sum.Checked != 0 {
		t.Fatalf("second run read what it knew: %+v", sum)
	}
	// live-00-001 is a new incarnation whose claim is in doubt and due; it
	// must not hide behind what the cache knew of the old one.
	f.mu.Lock()
	r := f.recs["live-00-001"]
	f.recs["live-00-001"] = gameinstance.Record{GameInstanceID: r.GameInstanceID, State: gameinstance.StateAllocating, Version: r.Version + 1,
		LeaseExpiresAt: sweepT0.Add(-time.Hour), HealthDeadline: sweepT0.Add(-time.Hour).Add(DefaultPolicy.LinkTimeout)}
	delete(f.recs, "live-00-002") // ended and gone
	f.shards[0] = f.shards[0][:2]
	f.mu.Unlock()
	sum := run(sweepT0.Add(time.Minute + 500*time.Millisecond)) // before what the cache knew runs out
	if sum.Checked != 1 || sum.OutcomesLost != 1 {
		t.Fatalf("third run: %+v; want the new incarnation read and failed", sum)
	}
	c := s.watch.Load()
	if _, ok := c.shards[0]["live-00-002"]; ok || len(c.shards[0]) != 1 {
		t.Fatalf("the cache holds %v; want only live-00-000", c.shards[0])
	}
}

// A full cache takes no more; instances it has no room for are read every
// run and still marked on time.
func TestWatchCacheIsBounded(t *testing.T) {
	f := newFakeStore(2)
	g := newLiveGames(f, sweepT0.Add(-2*time.Minute), 10)
	s := fakeService(f, sweepT0)
	s.watch.Store(newWatchCache(2, 8)) // 4 a shard
	for m := range 3 {
		now := sweepT0.Add(time.Duration(m) * time.Minute)
		g.beatUntil(now)
		s.Now = func() time.Time { return now }
		sum, err := s.sweep(quiet(context.Background()), sweepLimits{capacity: 100, workers: 2, minMargin: time.Second})
		if err != nil || sum.Marked != 0 {
			t.Fatalf("run %d: %+v, %v", m, sum, err)
		}
		if c := s.watch.Load(); len(c.shards[0]) > 4 || len(c.shards[1]) > 4 {
			t.Fatalf("run %d: the cache holds %d + %d, past its bound of 4 a shard", m, len(c.shards[0]), len(c.shards[1]))
		}
	}
	if n := f.reads["live-00-009"]; n != 3 {
		t.Errorf("an instance the cache had no room for was read %d times in 3 runs, want 3", n)
	}
}

// A shard whose reads fail is that shard's failure: the others are swept.
func TestSweepCountsAFailedReadAsTheShardsFailure(t *testing.T) {
	f := newFakeStore(4)
	var ids []string
	for sh := range 4 {
		ids = append(ids, f.addDue(sh, 5, sweepT0)...)
	}
	f.healthErr[ids[0]] = errStoreDown
	sum, err := fakeService(f, sweepT0.Add(time.Hour)).sweep(quiet(context.Background()), sweepLimits{capacity: 100, workers: 2, minMargin: time.Second})
	if err != nil || sum.ShardFailures != 1 || sum.Marked != 15 {
		t.Fatalf("sweep = %+v, %v; want shard 0 failed, the 15 others marked", sum, err)
	}
}
