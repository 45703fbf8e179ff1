package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// RoomCapacity is the rooms each bench game server offers: local/dev.yaml's
// us-west servers offer 4, and the rooms cost is for 4 games per server.
const RoomCapacity = 4

// maxKeptSessions bounds the session tokens a roomHost keeps.
const maxKeptSessions = 1024

// roomHost is a game server that offers rooms, as local/sampleserver runs
// one: the instance the stand-in allocated it for, and the SDK's session
// callback on loopback (the host the stand-in's allocations name), which
// takes every session at once. It keeps each session's PartnerGameToken,
// so the bench can play the session's link-back calls.
type roomHost struct {
	game     // the instance that brought the server
	callback *gameserver.SessionCallback
	srv      *httptest.Server
	drained  chan struct{}
	// What became of its game: linked offering rooms, rooms closed
	// (capacity 0), ended. shutRooms does what is left.
	linked, closed, ended bool

	mu       sync.Mutex
	sessions map[string]string // session id → its PartnerGameToken
}

// startRoomHost serves a session callback with a minted token. Its
// Sessions channel is drained at once, as a game server starts each
// session as it comes, so no callback waits or is refused for a full
// buffer.
func startRoomHost() (*roomHost, error) {
	cb, err := gameserver.NewSessionCallback(gameserver.SessionCallbackOptions{Logger: logging.New(io.Discard, 0)})
	if err != nil {
		return nil, err
	}
	h := &roomHost{callback: cb, srv: httptest.NewServer(cb), drained: make(chan struct{}), sessions: map[string]string{}}
	go func() {
		defer close(h.drained)
		for p := range cb.Sessions() {
			h.mu.Lock()
			if len(h.sessions) < maxKeptSessions {
				h.sessions[p.GameInstanceID] = p.PartnerGameToken
			}
			h.mu.Unlock()
		}
	}()
	return h, nil
}

// sessionToken is the PartnerGameToken the service called back with for id.
func (h *roomHost) sessionToken(id string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.sessions[id]
	return t, ok
}

// offer is the link body offering capacity rooms; 0 closes the server to
// new sessions. It carries the callback token: never print it.
func (h *roomHost) offer(capacity int) string {
	b, _ := json.Marshal(gameserver.LinkRequest{Rooms: h.callback.Offer(h.srv.URL+"/sessions", capacity)})
	return string(b)
}

// Close refuses every later callback and stops the callback server.
func (h *roomHost) Close() {
	h.callback.Stop()
	h.srv.Close()
	<-h.drained
}

// allocateHost allocates the instance id that brings h's game server,
// through the stack: dedicated, so that it is a whole server from the
// stand-in and never a room on another bench server, and with the bench's
// own PartnerGameToken, which the server links with.
func allocateHost(ctx context.Context, c *allocclient.Client, h *roomHost, id string) error {
	h.game = game{id: id, token: gameserver.NewCallbackToken()}
	a, err := c.Allocate(ctx, allocclient.AllocateRequest{GameInstanceID: id, DesiredRegion: RegionOK, GameServerVersion: Version,
		ServerArgs: "-map=arena", PartnerGameToken: h.token, Dedicated: true})
	switch {
	case err != nil:
		return fmt.Errorf("allocate game server %s: %w", id, err)
	case !a.Created || a.Server == nil || a.Placement != allocclient.PlacementAllocator:
		return fmt.Errorf("allocate game server %s: not a fresh server from the Allocator (%s, placement %q)", id, a.State, a.Placement)
	}
	return nil
}

// endAll ends each instance through the stack (DELETE /v1/allocations/{id}),
// giving back the rooms they hold; it returns the first failure.
func endAll(ctx context.Context, c *allocclient.Client, ids []string) error {
	var first error
	for _, id := range ids {
		if a, err := c.End(ctx, id); err != nil || a.State != "Ended" {
			if first == nil {
				first = fmt.Errorf("end %s: %v (state %v)", id, err, stateOf(a))
			}
		}
	}
	return first
}

func stateOf(a *allocclient.Allocation) string {
	if a == nil {
		return "unknown"
	}
	return string(a.State)
}

// linkVia links (or closes) h's instance at base, the stack's API or a
// linkBackRig's, with body.
func linkVia(ctx context.Context, base string, h *roomHost, body string) error {
	_, err := linkBackCall(ctx, base, h.id, "link", h.token, body)
	return err
}

// openRooms starts n game servers, each with its session callback and
// allocated through the stack as instance prefix-i. It returns the
// servers started so far even when one fails, for shutRooms.
func openRooms(ctx context.Context, client *allocclient.Client, n int, prefix string) ([]*roomHost, error) {
	var hosts []*roomHost
	for i := range n {
		h, err := startRoomHost()
		if err != nil {
			return hosts, err
		}
		hosts = append(hosts, h)
		if err := allocateHost(ctx, client, h, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
			return hosts, err
		}
	}
	return hosts, nil
}

// shutRooms closes the rooms of the servers still open (a link with
// capacity 0, through the stack), ends the sessions and the servers' own
// games not ended yet (DELETE), and stops their session callbacks. It runs
// after a failure too, on its own time: a server left open would take
// the later phases' allocations.
func shutRooms(ctx context.Context, client *allocclient.Client, gameServerURL string, hosts []*roomHost, sessions *[]string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []error
	ids := *sessions
	for _, h := range hosts {
		if h.linked && !h.closed {
			if err := linkVia(ctx, gameServerURL, h, h.offer(0)); err != nil {
				errs = append(errs, fmt.Errorf("closing the rooms of %s: %w", h.id, err))
			}
		}
		if h.id != "" && !h.ended {
			ids = append(ids, h.id)
		}
	}
	if err := endAll(ctx, client, ids); err != nil {
		errs = append(errs, err)
	}
	*sessions = nil
	for _, h := range hosts {
		h.Close()
	}
	return errors.Join(errs...)
}
