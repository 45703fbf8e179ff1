package main

import (
	"context"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// host is a rooms server's allocated life: several sessions (game
// instances) at once on one game port. The first comes from the payload
// file and offers the rooms when it links; the service sends the others
// to the session callback. Each session links and ends on its own (IWON,
// MAX_GAME_LENGTH, the backend); one failing drops it alone. The host
// heartbeats them all in one loop (roomsbeat.go). The server keeps taking
// sessions until it is told to stop.
type host struct {
	*server
	callback *gameserver.SessionCallback
	beatWake chan struct{} // buffered 1: a session linked, the loop may have one to beat through

	mu       sync.Mutex
	live     map[string]*session // by game instance, until play returns
	sessions sync.WaitGroup      // the sessions' goroutines
}

// closeGrace bounds the link that closes the server to new sessions; the
// ends after it (endGrace) keep the whole within the fleet's 5 s grace.
const closeGrace = 750 * time.Millisecond

// run hosts sessions until ctx ends, then closes the server to new ones,
// ends every session in play ("Terminated") and returns nil. It returns
// the first session's error when that one never linked: the rooms were
// never offered, so no other session can come, as a dedicated server's
// failed link ends it.
func (h *host) run(ctx context.Context, first gameserver.Payload, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/sessions", h.callback)
	// The service waits ROOM_CALLBACK_TIMEOUT (2 s) for an answer; a body
	// slower than ReadTimeout is no callback it still waits for.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, ErrorLog: h.log}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	callbackURL := "http://" + net.JoinHostPort(h.cfg.Host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)) + "/sessions"

	// Sessions end when the host says so, once it has closed the server
	// to new ones, not the moment ctx ends.
	sessCtx, terminate := context.WithCancel(context.WithoutCancel(ctx))
	defer terminate()
	stopBeats := h.startHeartbeats(sessCtx)
	defer stopBeats()
	firstFailed := make(chan error, 1)
	h.start(sessCtx, first, h.callback.Offer(callbackURL, h.cfg.Rooms), firstFailed)
	var err error
serve:
	for {
		select {
		case p := <-h.callback.Sessions(): // closed only by Stop, below
			h.start(sessCtx, p, nil, nil)
		case err = <-firstFailed:
			break serve
		case <-ctx.Done():
			h.log.Print("asked to stop")
			break serve
		}
	}
	h.closeToNewSessions(ctx)
	// The loop stops first: no heartbeat renews a session the host is
	// ending.
	stopBeats()
	terminate()
	// The sessions the callback accepted but the host had not started
	// before Stop: the service placed them here, so their rooms come back
	// only once they end.
	for p := range h.callback.Sessions() {
		h.sessions.Go(func() { h.endNow(ctx, p, "Terminated") })
	}
	h.sessions.Wait()
	return err
}

// logger is a session's: the server's, with its game instance.
func (h *host) logger(id string) *log.Logger {
	return log.New(h.log.Writer(), h.log.Prefix()+id+" ", h.log.Flags())
}

// start plays p's session on a goroutine of its own. failed, when set,
// hears the session's error if it never linked.
func (h *host) start(ctx context.Context, p gameserver.Payload, offer *gameserver.RoomOffer, failed chan<- error) {
	id, logger := p.GameInstanceID, h.logger(p.GameInstanceID)
	h.mu.Lock()
	defer h.mu.Unlock()
	// The service never places more than Rooms; twice that leaves slack
	// for sessions still saying goodbye, and bounds what a faulty caller
	// can start.
	if _, ok := h.live[id]; ok || len(h.live) >= 2*h.cfg.Rooms {
		logger.Printf("not started: already in play, or %d sessions are", len(h.live))
		if !ok {
			h.sessions.Go(func() { h.endNow(ctx, p, "NoFreeRoom") })
		}
		return
	}
	s, err := h.newSession(p, logger, h)
	if err != nil {
		logger.Printf("not started: %v", err)
		return
	}
	s.offer = offer
	h.live[id] = s
	logger.Printf("session started (%d in play)", len(h.live))
	h.sessions.Go(func() {
		err := s.play(ctx)
		h.mu.Lock()
		delete(h.live, id)
		h.mu.Unlock()
		switch {
		case err == nil:
		case failed != nil && !s.linked.Load():
			failed <- err
		default:
			logger.Printf("session dropped: %v", err)
		}
	})
}

// closeToNewSessions refuses further callbacks and, by linking one live
// session again with capacity 0, tells the service to stop placing
// sessions here. Failing that is only logged: the callback's 503s make
// the service stop too.
func (h *host) closeToNewSessions(ctx context.Context) {
	h.callback.Stop()
	h.mu.Lock()
	var s *session
	for _, c := range h.live {
		if c.linked.Load() {
			s = c
			break
		}
	}
	h.mu.Unlock()
	if s == nil {
		h.log.Print("closed to new sessions (no linked session to tell the service through)")
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeGrace)
	defer cancel()
	if _, err := s.gs.Link(ctx, s.linkRequest(&gameserver.RoomOffer{Capacity: 0})); err != nil {
		h.log.Printf("closing the rooms through %s: %v (new sessions are refused anyway)", s.gs.GameInstanceID(), err)
		return
	}
	h.log.Printf("closed to new sessions (linked %s with 0 rooms)", s.gs.GameInstanceID())
}

// endNow ends a session that is not played, bounded by endGrace.
func (h *host) endNow(ctx context.Context, p gameserver.Payload, reason string) {
	logger := h.logger(p.GameInstanceID)
	gs, err := h.newClient(p, logger)
	if err != nil {
		logger.Printf("cannot end it: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endGrace)
	defer cancel()
	if _, err := gs.End(ctx, reason); err != nil {
		logger.Printf("end (%s): %v", reason, err)
		return
	}
	logger.Printf("ended unplayed: %s", reason)
}
