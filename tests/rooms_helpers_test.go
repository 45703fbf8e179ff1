//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// roomToken is the session callback token the tests' game servers offer.
const roomToken = "session-callback-token-0123456789abcdefABCDEF"

// sessionServer plays a game server's session callback endpoint on
// loopback (the host the stand-in's allocations name): it records every
// callback and answers as scripted, 200 by default.
type sessionServer struct {
	srv *httptest.Server

	mu     sync.Mutex
	calls  []allocation.Payload
	auths  []string
	status int           // 0 = 200
	delay  time.Duration // before answering
	onCall func()        // runs as a callback arrives, before it is answered
}

func newSessionServer(t *testing.T) *sessionServer {
	t.Helper()
	s := &sessionServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sessionServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	var p allocation.Payload
	_ = json.Unmarshal(raw, &p)
	s.mu.Lock()
	s.calls, s.auths = append(s.calls, p), append(s.auths, r.Header.Get("Authorization"))
	status, delay, onCall := s.status, s.delay, s.onCall
	s.mu.Unlock()
	if onCall != nil {
		onCall()
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
}

// URL is the callback URL a game server on this host offers.
func (s *sessionServer) URL() string { return s.srv.URL + "/sessions" }

// whenCalled runs f as each later callback arrives.
func (s *sessionServer) whenCalled(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCall = f
}

func (s *sessionServer) answer(status int, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.delay = status, delay
}

// sessions are the payloads called back, in order.
func (s *sessionServer) sessions() []allocation.Payload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// authorization is the i-th callback's Authorization header.
func (s *sessionServer) authorization(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auths[i]
}

// payloadOf is the payload a callback delivered for id.
func (s *sessionServer) payloadOf(t *testing.T, id string) allocation.Payload {
	t.Helper()
	for _, p := range s.sessions() {
		if p.GameInstanceID == id {
			return p
		}
	}
	t.Fatalf("no session callback for %s", id)
	return allocation.Payload{}
}

// linkRooms links id (allocated with tokenFor(id)) offering capacity rooms
// with the callback on cb.
func (e *env) linkRooms(t *testing.T, id string, capacity int, cb *sessionServer) response {
	t.Helper()
	return e.server(t, "link", id, fmt.Sprintf(`{"rooms":{"capacity":%d,"callbackUrl":%q,"callbackToken":%q}}`, capacity, cb.URL(), roomToken))
}

// linkAsSession links a session placed in a room with its own token.
func (e *env) linkAsSession(t *testing.T, p allocation.Payload) response {
	t.Helper()
	return e.doAuth(t, http.MethodPost, "/v1/game-instances/"+p.GameInstanceID+"/link", "Bearer "+p.PartnerGameToken, "")
}

// gameServer reads a game server's record.
func (e *env) gameServer(t *testing.T, address string) gameinstance.GameServer {
	t.Helper()
	gs, err := e.servers.Get(context.Background(), address)
	if err != nil {
		t.Fatalf("game server %s: %v", address, err)
	}
	return gs
}

// requireRoomsBalance checks the rooms invariant over both tables: for
// every game server, the rooms in use are exactly the live instances
// placed on it (its sessions), never above capacity, and its free rooms
// are capacity less rooms in use. It returns the rooms in use by address.
func (e *env) requireRoomsBalance(t *testing.T) map[string]int {
	t.Helper()
	ctx := context.Background()
	servers, _, err := e.servers.Scan(ctx, 10000)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string][]string{}
	p := dynamodb.NewScanPaginator(stack.ddb, &dynamodb.ScanInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			rec, err := store.DecodeGameInstance(item)
			if err != nil {
				t.Fatal(err)
			}
			if rec.HoldsRoom() {
				live[rec.RoomServer] = append(live[rec.RoomServer], rec.GameInstanceID)
			}
		}
	}
	inUse := map[string]int{}
	for _, gs := range servers {
		raw := rawServerItem(t, e.serversTable, gs.Address)
		sessions := slices.Clone(gs.Sessions)
		sort.Strings(sessions)
		want := live[gs.Address]
		sort.Strings(want)
		if !slices.Equal(sessions, want) || gs.InUse != len(sessions) || gs.InUse > gs.Capacity || num(raw, "freeRooms") != fmt.Sprint(gs.Capacity-gs.InUse) {
			t.Errorf("game server %s: %d/%d rooms in use, freeRooms %s, sessions %v; live instances placed on it %v",
				gs.Address, gs.InUse, gs.Capacity, num(raw, "freeRooms"), sessions, want)
		}
		inUse[gs.Address] = gs.InUse
		delete(live, gs.Address)
	}
	for addr, ids := range live {
		t.Errorf("instances %v hold a room on %s, which has no record", ids, addr)
	}
	return inUse
}

func rawServerItem(t *testing.T, table, address string) map[string]types.AttributeValue {
	t.Helper()
	out, err := stack.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{store.GameServerKey: &types.AttributeValueMemberS{Value: address}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// placement is an answer's placement and the rooms attempts' servers.
func placement(r response) (string, []string) {
	p, _ := r.Body["placement"].(string)
	var servers []string
	for _, a := range r.attempts() {
		if a["placement"] == "room" {
			servers = append(servers, fmt.Sprint(a["server"]))
		}
	}
	return p, servers
}

// allocateIn allocates id in region with a minted token (as backends should).
func (e *env) allocateIn(t *testing.T, id, region, extra string) response {
	t.Helper()
	return e.allocate(t, fmt.Sprintf(`{"gameInstanceId":%q,"desiredRegion":%q%s}`, id, region, extra))
}

func noTokens(t *testing.T, raw string) {
	t.Helper()
	if strings.Contains(raw, roomToken) {
		t.Fatalf("the callback token leaked: %s", raw)
	}
}
