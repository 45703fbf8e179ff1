package rooms

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// fakeStore serves scripted candidates, and takes and gives back rooms in
// memory with the real store's rules.
type fakeStore struct {
	mu       sync.Mutex
	servers  []gameinstance.GameServer // in candidate order
	taken    map[string]string         // address -> session
	full     map[string]bool           // takes lost to a concurrent allocation
	takeErr  error
	giveErr  error
	gaveBack []string
	reset    []string
	reads    int
}

func (f *fakeStore) Candidates(_ context.Context, _ gameinstance.RoomPool, _ gameinstance.Scheduling, limit int, cursor string) ([]gameinstance.GameServer, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	from := 0
	if cursor != "" {
		_, _ = fmt.Sscan(cursor, &from)
	}
	to := min(from+limit, len(f.servers))
	next := ""
	if to < len(f.servers) {
		next = fmt.Sprint(to)
	}
	return append([]gameinstance.GameServer(nil), f.servers[from:to]...), next, nil
}

func (f *fakeStore) Take(_ context.Context, id, _ string, gs gameinstance.GameServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.takeErr != nil {
		return f.takeErr
	}
	if f.full[gs.Address] {
		return gameinstance.ErrNoRoom
	}
	f.taken[gs.Address] = id
	return nil
}

func (f *fakeStore) GiveBack(_ context.Context, _, address string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.giveErr != nil {
		return false, f.giveErr
	}
	delete(f.taken, address)
	f.gaveBack = append(f.gaveBack, address)
	return false, nil
}

func (f *fakeStore) CallbackSucceeded(_ context.Context, address string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reset = append(f.reset, address)
	return nil
}

// fakeCaller answers each server's callbacks as scripted (OK by default).
type fakeCaller struct {
	answers map[string]CallResult
	calls   []string
	tokens  []string
}

func (c *fakeCaller) Call(_ context.Context, url, _ string, p allocation.Payload) CallResult {
	c.calls, c.tokens = append(c.calls, url), append(c.tokens, p.PartnerGameToken)
	if r, ok := c.answers[url]; ok {
		return r
	}
	return CallResult{Status: 200, OK: true, Sent: true}
}

func servers(n int) []gameinstance.GameServer {
	out := make([]gameinstance.GameServer, n)
	for i := range out {
		addr := fmt.Sprintf("10.0.0.%d:7777", i+1)
		out[i] = gameinstance.GameServer{Address: addr, IP: fmt.Sprintf("10.0.0.%d", i+1), Ports: map[string]int{"game": 7777},
			CallbackURL: "http://" + addr + "/sessions", CallbackToken: "t", Region: "us-west", Accepting: true}
	}
	return out
}

func TestPlace(t *testing.T) {
	refused := CallResult{Status: 503, Sent: true, Error: "session callback answered 503"}
	timedOut := CallResult{Sent: true, TimedOut: true}
	tests := []struct {
		name       string
		servers    int
		full       []int // servers whose take is lost to a race
		answers    map[int]CallResult
		failures   int   // the first server's run of failed callbacks
		takeErr    error // every take
		giveErr    error
		wantServer int // 1-based; 0 = not placed
		wantCalls  []int
		wantTry    int
		wantErr    error
		wantOrphan []bool
	}{
		{name: "the first server takes it", servers: 3, wantServer: 1, wantCalls: []int{1}},
		{name: "no candidates", servers: 0},
		{name: "races lost move on, not to the Allocator", servers: 3, full: []int{1, 2}, wantServer: 3, wantCalls: []int{3}},
		{name: "every room lost", servers: 2, full: []int{1, 2}},
		{name: "a refusal, then the next server", servers: 3, answers: map[int]CallResult{1: refused}, wantServer: 2, wantCalls: []int{1, 2}, wantTry: 1,
			wantOrphan: []bool{false, false}},
		{name: "at most two servers called", servers: 4, answers: map[int]CallResult{1: refused, 2: timedOut}, wantCalls: []int{1, 2},
			wantOrphan: []bool{false, true}},
		{name: "a success ends a run of failures", servers: 1, failures: 1, wantServer: 1, wantCalls: []int{1}},
		{name: "the claim was lost", servers: 2, takeErr: gameinstance.ErrClaimLost, wantErr: gameinstance.ErrClaimLost},
		{name: "a take in doubt stops the allocation", servers: 2, takeErr: gameinstance.ErrRoomInDoubt, wantErr: gameinstance.ErrRoomInDoubt},
		{name: "a failed take asks the Allocator", servers: 2, takeErr: errors.New("throttled")},
		{name: "a give-back in doubt stops it", servers: 2, answers: map[int]CallResult{1: refused}, giveErr: gameinstance.ErrRoomInDoubt,
			wantCalls: []int{1}, wantErr: gameinstance.ErrRoomInDoubt, wantOrphan: []bool{false}},
		{name: "servers beyond the first page", servers: 25, full: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, wantServer: 13, wantCalls: []int{13}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeStore{servers: servers(tc.servers), taken: map[string]string{}, full: map[string]bool{}, takeErr: tc.takeErr, giveErr: tc.giveErr}
			for _, i := range tc.full {
				st.full[st.servers[i-1].Address] = true
			}
			if tc.failures > 0 {
				st.servers[0].CallbackFailures = tc.failures
			}
			caller := &fakeCaller{answers: map[string]CallResult{}}
			for i, r := range tc.answers {
				caller.answers[st.servers[i-1].CallbackURL] = r
			}
			p := &Pool{Store: st, Caller: caller, CallbackTimeout: time.Second}
			res := p.Place(context.Background(), allocation.RoomRequest{GameInstanceID: "gi-1", ClaimID: "c",
				Pool: gameinstance.RoomPool{Region: "us-west"}, Payloads: []allocation.Payload{{PartnerGameToken: "try-0"}, {PartnerGameToken: "try-1"}},
				Deadline: time.Now().Add(10 * time.Second)})
			if !errors.Is(res.Err, tc.wantErr) || (tc.wantErr == nil) != (res.Err == nil) {
				t.Fatalf("err = %v, want %v", res.Err, tc.wantErr)
			}
			var calls []int
			for _, url := range caller.calls {
				for i, gs := range st.servers {
					if gs.CallbackURL == url {
						calls = append(calls, i+1)
					}
				}
			}
			if !reflect.DeepEqual(calls, tc.wantCalls) {
				t.Fatalf("called servers %v, want %v", calls, tc.wantCalls)
			}
			if tc.wantServer == 0 {
				if res.Server != nil {
					t.Fatalf("placed on %v, want nothing", res.Server)
				}
			} else {
				want := st.servers[tc.wantServer-1]
				if res.Server == nil || res.Address != want.Address || !reflect.DeepEqual(res.Server, want.Server()) || res.Try != tc.wantTry {
					t.Fatalf("placed on %v (%s, try %d), want %s try %d", res.Server, res.Address, res.Try, want.Address, tc.wantTry)
				}
				if st.taken[want.Address] != "gi-1" {
					t.Fatalf("the room on %s is not held", want.Address)
				}
			}
			for i, tok := range caller.tokens {
				if tok != fmt.Sprintf("try-%d", i) {
					t.Errorf("call %d carried %q: each server its own token", i, tok)
				}
			}
			for i, a := range res.Attempts {
				if a.Placement != gameinstance.PlacementRoom || a.Server != st.servers[calls[i]-1].Address || a.Region != "us-west" {
					t.Errorf("attempt %d = %+v", i, a)
				}
				if tc.wantOrphan != nil && a.SuspectedOrphan != tc.wantOrphan[i] {
					t.Errorf("attempt %d suspectedOrphan %v, want %v", i, a.SuspectedOrphan, tc.wantOrphan[i])
				}
			}
			// Every room taken and not placed was given back.
			if len(st.gaveBack)+boolInt(res.Server != nil) != len(caller.calls) && tc.giveErr == nil {
				t.Errorf("%d calls, %d given back", len(caller.calls), len(st.gaveBack))
			}
			if tc.failures > 0 && len(st.reset) != 1 {
				t.Errorf("a success after failures reset nothing")
			}
		})
	}
}

// A callback never starts without time to give its room back before the
// allocation's deadline.
func TestPlaceRespectsTheDeadline(t *testing.T) {
	st := &fakeStore{servers: servers(2), taken: map[string]string{}, full: map[string]bool{}}
	caller := &fakeCaller{}
	res := (&Pool{Store: st, Caller: caller, CallbackTimeout: defaults.RoomCallbackTimeout}).Place(context.Background(), allocation.RoomRequest{
		Payloads: make([]allocation.Payload, 2), Deadline: time.Now().Add(giveBackReserve + minCallback/2)})
	if res.Server != nil || len(caller.calls) != 0 || len(st.taken) != 0 {
		t.Fatalf("placed %v with %d calls and %v taken, with no time left", res.Server, len(caller.calls), st.taken)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A first page listed ahead (ListRooms, while the claim was written) is
// the page Place starts from: it does not list it again, goes on to the
// next page from it, and a listing that failed asks the Allocator.
func TestPlaceFromAListingAhead(t *testing.T) {
	st := &fakeStore{servers: servers(15), taken: map[string]string{}, full: map[string]bool{}}
	for i := range 10 {
		st.full[st.servers[i].Address] = true // the whole first page is lost to races
	}
	p := &Pool{Store: st, Caller: &fakeCaller{}, CallbackTimeout: time.Second}
	listed := make(chan allocation.RoomListing, 1)
	listed <- p.ListRooms(context.Background(), gameinstance.RoomPool{Region: "us-west"}, gameinstance.SchedulingPacked)
	req := allocation.RoomRequest{GameInstanceID: "gi", ClaimID: "c", Payloads: make([]allocation.Payload, 2), Deadline: time.Now().Add(time.Minute), Listed: listed}
	if res := p.Place(context.Background(), req); res.Address != st.servers[10].Address || st.reads != 2 {
		t.Fatalf("placed on %q after %d reads; want the second page's first server after the listing ahead and one more read", res.Address, st.reads)
	}
	failed := make(chan allocation.RoomListing, 1)
	failed <- allocation.RoomListing{Err: errors.New("throttled")}
	req.Listed, st.reads = failed, 0
	if res := p.Place(context.Background(), req); res.Server != nil || len(res.Attempts) != 0 || st.reads != 0 {
		t.Fatalf("a failed listing ahead: %+v after %d reads; want the Allocator asked", res, st.reads)
	}
}
