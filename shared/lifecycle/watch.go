package lifecycle

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// WatchCacheLimit bounds what a warm sweep remembers: at most this many
// Linked instances (about 120 bytes each, so some 24 MB at the limit, in a
// 128 MB function). Past it, instances it has no room for are read every
// run: dearer, never later.
const WatchCacheLimit = 200000

// watchCache is what a warm sweep remembers between runs, per index shard:
// until when each Linked instance it has read cannot be overdue (its
// heartbeat deadline then), and under which index key it read it. An
// instance the sweep does not know, or knows under another key (a new
// incarnation of the id), or whose time has come, is read; so with the
// default settings a warm sweep reads an instance every other run instead
// of every run, and a cold one (a new container, or a run beside another)
// reads them all. It is never needed for correctness: it only skips reads
// whose answer it already knows, because a Linked instance's deadline only
// moves later while its index key stays put.
type watchCache struct {
	shards []map[string]watchMark
	limit  int    // per shard
	run    uint32 // counts runs, to forget instances no longer listed
}

type watchMark struct {
	key, until int64 // the index key read under, the deadline (ms)
	run        uint32
}

func newWatchCache(shards, limit int) *watchCache {
	c := &watchCache{shards: make([]map[string]watchMark, shards), limit: max(1, limit/max(1, shards))}
	for i := range c.shards {
		c.shards[i] = map[string]watchMark{}
	}
	return c
}

// known reports that e needs no read at now, and notes that this run
// listed it. Only the shard's own goroutine calls it.
func (c *watchCache) known(shard int, e gameinstance.IndexEntry, now time.Time) bool {
	m, ok := c.shards[shard][e.ID]
	if !ok || m.key != e.Deadline.UnixMilli() {
		return false
	}
	m.run = c.run
	c.shards[shard][e.ID] = m
	return now.UnixMilli() < m.until
}

// remember notes that the instance listed as e cannot be overdue before
// until; nothing once the shard's share is full.
func (c *watchCache) remember(shard int, e gameinstance.IndexEntry, until time.Time) {
	marks := c.shards[shard]
	if _, ok := marks[e.ID]; !ok && len(marks) >= c.limit {
		return
	}
	marks[e.ID] = watchMark{key: e.Deadline.UnixMilli(), until: until.UnixMilli(), run: c.run}
}

// forget drops what shard holds of instances this run did not list; only
// for a shard listed to its end, where an instance not listed has left
// the index (ended, or marked).
func (c *watchCache) forget(shard int) {
	for id, m := range c.shards[shard] {
		if m.run != c.run {
			delete(c.shards[shard], id)
		}
	}
}

// takeWatch hands a run the service's cache (a new one the first time, or
// when another run holds it); putWatch gives it back for the next run.
func (s *Service) takeWatch(shards int) *watchCache {
	c := s.watch.Swap(nil)
	if c == nil || len(c.shards) != shards {
		c = newWatchCache(shards, WatchCacheLimit)
	}
	c.run++
	return c
}

func (s *Service) putWatch(c *watchCache) { s.watch.Store(c) }
