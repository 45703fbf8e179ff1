package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// fakeStore keeps records in memory, spread over shards in a fixed order,
// and lists as due those with a health deadline at or before now, as the
// index does. Safe for the sweep's concurrent workers.
type fakeStore struct {
	mu       sync.Mutex
	shards   [][]string // ids per shard, in deadline order
	recs     map[string]gameinstance.Record
	getDelay time.Duration
	getErr   map[string]error // per id
	panicOn  map[string]bool
	conflict map[string]bool // every write of these conflicts
	dueErr   map[int]error   // per shard
	// healthErr fails HealthOf for these ids; reads counts what it read.
	healthErr map[string]error
	reads     map[string]int
	queries   atomic.Int64
	inFlight  atomic.Int64
	maxIn     atomic.Int64
	servers   map[string]*fakeServer // game servers' records, by address
	released  int                    // rooms given back
	beats     int                    // conditional heartbeat writes tried
}

func newFakeStore(shards int) *fakeStore {
	return &fakeStore{shards: make([][]string, shards), recs: map[string]gameinstance.Record{},
		getErr: map[string]error{}, panicOn: map[string]bool{}, conflict: map[string]bool{}, dueErr: map[int]error{},
		healthErr: map[string]error{}, reads: map[string]int{}}
}

// addDue adds n Allocated instances to shard, past their link deadline at
// now.
func (f *fakeStore) addDue(shard, n int, now time.Time) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("gi-%02d-%05d", shard, i)
		at := now.Add(-time.Hour)
		f.recs[id] = gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocated, Region: "r1", Version: 1,
			CreatedAt: at, UpdatedAt: at, HealthDeadline: at.Add(DefaultPolicy.LinkTimeout)}
		f.shards[shard] = append(f.shards[shard], id)
		ids = append(ids, id)
	}
	return ids
}

func (f *fakeStore) HealthShards() int { return len(f.shards) }

func (f *fakeStore) Due(_ context.Context, shard int, now time.Time, limit int, cursor string) ([]gameinstance.IndexEntry, string, error) {
	f.queries.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.dueErr[shard]; err != nil {
		return nil, "", err
	}
	from := 0
	if cursor != "" {
		from, _ = strconv.Atoi(cursor)
	}
	var found []gameinstance.IndexEntry
	list := f.shards[shard]
	for i := from; i < len(list); i++ {
		if len(found) == limit {
			return found, strconv.Itoa(i), nil
		}
		if r := f.recs[list[i]]; !r.HealthDeadline.IsZero() && !r.HealthDeadline.After(now) {
			found = append(found, gameinstance.IndexEntry{ID: list[i], Deadline: r.HealthDeadline})
		}
	}
	if limit > 0 && len(found) == limit {
		// Like DynamoDB, a page that reaches its limit has a next key
		// even when nothing follows.
		return found, strconv.Itoa(len(list)), nil
	}
	return found, "", nil
}

// HealthOf returns the records it holds of ids (reads counts them); a
// shard in healthErr fails the read of its instances.
func (f *fakeStore) HealthOf(_ context.Context, ids []string) ([]gameinstance.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []gameinstance.Record
	for _, id := range ids {
		if err := f.healthErr[id]; err != nil {
			return out, err
		}
		if r, ok := f.recs[id]; ok {
			out = append(out, f.fold(r))
			f.reads[id]++
		}
	}
	return out, nil
}

func (f *fakeStore) Get(ctx context.Context, id string) (gameinstance.Record, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxIn.Load()
		if n <= m || f.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	if f.getDelay > 0 {
		select {
		case <-time.After(f.getDelay):
		case <-ctx.Done():
			return gameinstance.Record{}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.panicOn[id] {
		panic("a record no code path foresaw")
	}
	if err := f.getErr[id]; err != nil {
		return gameinstance.Record{}, err
	}
	r, ok := f.recs[id]
	if !ok {
		return gameinstance.Record{}, gameinstance.ErrNotFound
	}
	return f.fold(r), nil
}

func (f *fakeStore) Put(_ context.Context, rec gameinstance.Record) (gameinstance.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conflict[rec.GameInstanceID] || f.recs[rec.GameInstanceID].Version != rec.Version {
		return gameinstance.Record{}, gameinstance.ErrVersionConflict
	}
	rec.Version++
	f.recs[rec.GameInstanceID] = rec
	return rec, nil
}

func (f *fakeStore) state(id string) gameinstance.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recs[id].State
}

// countRegions counts link timeouts per region, concurrently.
type countRegions struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countRegions) LinkTimedOut(_ context.Context, region string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[region]++
}

var errStoreDown = errors.New("store down")

// quiet: the sweep logs every instance it marks; tests need not see them.
func quiet(ctx context.Context) context.Context {
	return logging.WithLogger(ctx, logging.New(io.Discard, slog.LevelError))
}

// Heartbeat applies the store's condition: Linked, with that token hash.
func (f *fakeStore) Heartbeat(_ context.Context, id, tokenHash string, now time.Time) (gameinstance.Record, bool, error) {
	return f.beat(id, func(r gameinstance.Record) bool { return r.PartnerGameTokenHash == tokenHash }, now)
}

func (f *fakeStore) beat(id string, guard func(gameinstance.Record) bool, now time.Time) (gameinstance.Record, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beats++
	if err := f.getErr[id]; err != nil {
		return gameinstance.Record{}, false, err
	}
	r, ok := f.recs[id]
	if !ok {
		return gameinstance.Record{}, false, gameinstance.ErrNotFound
	}
	if r.State != gameinstance.StateLinked || !guard(r) || r.HealthDeadline.IsZero() {
		return r, false, nil
	}
	r.LastHeartbeatAt, r.UpdatedAt = now, now
	r.Version++
	f.recs[id] = r
	return r, true, nil
}

// fakeServer is a game server's record as the fake keeps it.
type fakeServer struct {
	capacity  int
	sessions  map[string]bool
	accepting bool
	reason    string
	offer     gameinstance.RoomOffer
	beatAt    time.Time // its last heartbeat for all its sessions
}

// fold is the store's: a Linked session holding a room counts its
// server's last beat as its own heartbeat. Called with f.mu held.
func (f *fakeStore) fold(r gameinstance.Record) gameinstance.Record {
	if gs := f.servers[r.RoomServer]; gs != nil && r.State == gameinstance.StateLinked && gs.sessions[r.GameInstanceID] && gs.beatAt.After(r.LastHeartbeatAt) {
		r.LastHeartbeatAt = gs.beatAt
	}
	return r
}

// BeatServer applies the store's condition (session holds a room there)
// and returns the server's sessions, sorted.
func (f *fakeStore) BeatServer(_ context.Context, address, session string, now time.Time) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beats++
	gs := f.servers[address]
	if gs == nil || !gs.sessions[session] {
		return nil, gameinstance.ErrNotFound
	}
	gs.beatAt = now
	return slices.Sorted(maps.Keys(gs.sessions)), nil
}

// PutRoom applies the store's semantics: the instance's version
// condition, then the change's, atomically.
func (f *fakeStore) PutRoom(_ context.Context, rec gameinstance.Record, change gameinstance.RoomChange) (gameinstance.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conflict[rec.GameInstanceID] || f.recs[rec.GameInstanceID].Version != rec.Version {
		return gameinstance.Record{}, gameinstance.ErrVersionConflict
	}
	if err := f.changeRoomLocked(change); err != nil {
		return gameinstance.Record{}, err
	}
	rec.Version++
	f.recs[rec.GameInstanceID] = rec
	return rec, nil
}

func (f *fakeStore) ChangeRoom(_ context.Context, change gameinstance.RoomChange) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changeRoomLocked(change)
}

func (f *fakeStore) changeRoomLocked(c gameinstance.RoomChange) error {
	if f.servers == nil {
		f.servers = map[string]*fakeServer{}
	}
	gs := f.servers[c.Address]
	switch c.Op {
	case gameinstance.RoomJoin:
		if gs == nil {
			gs = &fakeServer{sessions: map[string]bool{}}
			f.servers[c.Address] = gs
		}
		inUse := len(gs.sessions)
		if !gs.sessions[c.SessionID] {
			inUse++
		}
		if inUse > c.Offer.Capacity {
			return &gameinstance.CapacityError{Capacity: c.Offer.Capacity, InUse: inUse}
		}
		gs.sessions[c.SessionID] = true
		gs.capacity, gs.accepting, gs.reason, gs.offer = c.Offer.Capacity, true, "", c.Offer
	case gameinstance.RoomClose:
		if gs == nil || !gs.sessions[c.SessionID] {
			return gameinstance.ErrRoomNotHeld
		}
		gs.accepting, gs.reason = false, gameinstance.ClosedByServer
	case gameinstance.RoomRelease:
		if gs != nil && gs.sessions[c.SessionID] {
			delete(gs.sessions, c.SessionID)
			f.released++
			if c.Close {
				gs.accepting, gs.reason = false, c.Reason
			}
		}
	}
	return nil
}

// server is a copy of a game server's record, nil when there is none.
func (f *fakeStore) server(address string) *fakeServer {
	f.mu.Lock()
	defer f.mu.Unlock()
	gs := f.servers[address]
	if gs == nil {
		return nil
	}
	c := *gs
	c.sessions = map[string]bool{}
	for id := range gs.sessions {
		c.sessions[id] = true
	}
	return &c
}
