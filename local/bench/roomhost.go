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
// callback on loopback, which takes every session at once and keeps its
// PartnerGameToken, so the bench can play the session's link-back calls.
type roomHost struct {
	game
	callback *gameserver.SessionCallback
	srv      *httptest.Server
	drained  chan struct{}
	// What became of its game (shutRooms does what is left).
	linked, closed, ended bool

	mu       sync.Mutex
	sessions map[string]string // session id → its PartnerGameToken
}

// openRooms starts n game servers, each with its session callback and
// allocated through the stack as instance prefix-i: dedicated, so a whole
// server from the stand-in and never a room on another bench server, with
// the bench's own PartnerGameToken. It returns the servers started so far
// even when one fails, for shutRooms.
func openRooms(ctx context.Context, client *allocclient.Client, n int, prefix string) ([]*roomHost, error) {
	var hosts []*roomHost
	for i := range n {
		cb, err := gameserver.NewSessionCallback(gameserver.SessionCallbackOptions{Logger: logging.New(io.Discard, 0)})
		if err != nil {
			return hosts, err
		}
		h := &roomHost{game: game{id: fmt.Sprintf("%s-%d", prefix, i), token: gameserver.NewCallbackToken()},
			callback: cb, srv: httptest.NewServer(cb), drained: make(chan struct{}), sessions: map[string]string{}}
		hosts = append(hosts, h)
		// Drained at once, as a game server starts each session as it comes,
		// so no callback waits or is refused for a full buffer.
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
		a, err := client.Allocate(ctx, allocclient.AllocateRequest{GameInstanceID: h.id, DesiredRegion: RegionOK, GameServerVersion: Version,
			ServerArgs: "-map=arena", PartnerGameToken: h.token, Dedicated: true})
		switch {
		case err != nil:
			return hosts, fmt.Errorf("allocate game server %s: %w", h.id, err)
		case !a.Created || a.Server == nil || a.Placement != allocclient.PlacementAllocator:
			return hosts, fmt.Errorf("allocate game server %s: not a fresh server from the Allocator (%s, placement %q)", h.id, a.State, a.Placement)
		}
	}
	return hosts, nil
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

// link links h's instance at base (the stack's or a linkBackRig's)
// offering capacity rooms.
func (h *roomHost) link(ctx context.Context, base string, capacity int) error {
	_, err := linkBackCall(ctx, base, h.id, "link", h.token, h.offer(capacity))
	return err
}

// endAll ends each instance through the stack, giving back the rooms they
// hold.
func endAll(ctx context.Context, c *allocclient.Client, ids []string) error {
	var errs []error
	for _, id := range ids {
		a, err := c.End(ctx, id)
		if err == nil && a.State != "Ended" {
			err = fmt.Errorf("state %s", a.State)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("end %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// shutRooms closes the rooms of the servers still open (a link with
// capacity 0, through the stack), ends the sessions and the servers' own
// games not ended yet, and stops their session callbacks. It runs after a
// failure too, on its own time: a server left open would take the later
// phases' allocations.
func shutRooms(ctx context.Context, client *allocclient.Client, gameServerURL string, hosts []*roomHost, sessions *[]string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []error
	ids := *sessions
	for _, h := range hosts {
		if h.linked && !h.closed {
			if err := h.link(ctx, gameServerURL, 0); err != nil {
				errs = append(errs, fmt.Errorf("closing the rooms of %s: %w", h.id, err))
			}
		}
		if !h.ended {
			ids = append(ids, h.id)
		}
	}
	errs = append(errs, endAll(ctx, client, ids))
	*sessions = nil
	for _, h := range hosts {
		h.callback.Stop()
		h.srv.Close()
		<-h.drained
	}
	return errors.Join(errs...)
}
