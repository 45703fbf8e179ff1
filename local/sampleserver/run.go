package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// server is what every session of the process shares.
type server struct {
	cfg      Config
	name     string
	address  string // host:game port, advertised to the registry and the backend
	gamePort int
	game     *game
	client   *http.Client
	log      *log.Logger
}

// run is the whole server: register, wait for an allocation, link, play
// one game, end it; or, with rooms (cfg.Rooms), host sessions until told
// to stop (rooms.go). It returns nil on every orderly exit (game over,
// shutdown requested through ctx, idle timeout) and an error otherwise.
func run(ctx context.Context, cfg Config) error {
	lns, err := listen(cfg)
	if err != nil {
		return err
	}
	for _, ln := range lns[1:] {
		defer ln.Close() // harmless once served
	}
	gamePort, allocPort := lns[0].Addr().(*net.TCPAddr).Port, lns[1].Addr().(*net.TCPAddr).Port
	name := cfg.ServerName
	if name == "" {
		name = fmt.Sprintf("sample-%s-%d", cfg.Region, gamePort)
	}
	logger := log.New(cmp.Or[io.Writer](cfg.Logs, os.Stderr), name+" ", log.LstdFlags|log.Lmicroseconds)
	srv := &server{cfg: cfg, name: name, address: net.JoinHostPort(cfg.Host, strconv.Itoa(gamePort)), gamePort: gamePort,
		game: newGame(lns[0], name, cfg.Rooms > 0, logger), client: &http.Client{Timeout: 10 * time.Second}, log: logger}
	logger.Printf("game port %s, alloc port %d", srv.address, allocPort)
	if cfg.Rooms > 0 && cfg.Agones == nil {
		logger.Printf("hosting %d sessions at once; session callback on port %d", cfg.Rooms, lns[2].Addr().(*net.TCPAddr).Port)
	}
	// A payload left by an earlier process in this directory belongs to a
	// finished game and holds a dead credential.
	if err := os.Remove(cfg.PayloadFile); err == nil {
		logger.Printf("removed a stale %s", cfg.PayloadFile)
	}
	go srv.game.serve()
	defer srv.game.close()
	if cfg.Agones != nil {
		return srv.onAgones(ctx, cfg.Agones)
	}

	if ok, err := srv.awaitAllocated(ctx, lns[1]); !ok {
		return err
	}
	// From here on the server is what a studio's would be: it reads the
	// payload file the sidecar wrote and talks to the backend through the
	// game-server SDK.
	payload, err := gameserver.WaitForPayload(ctx, cfg.PayloadFile, 0)
	if err != nil {
		return err
	}
	if cfg.Rooms > 0 {
		cb, err := gameserver.NewSessionCallback(gameserver.SessionCallbackOptions{Logger: sdkLogger(logger)})
		if err != nil {
			return err
		}
		h := &host{server: srv, callback: cb, live: map[string]*session{}, beatWake: make(chan struct{}, 1)}
		return h.run(ctx, payload, lns[2])
	}
	s, err := srv.newSession(payload, logger, nil)
	if err != nil {
		return err
	}
	return s.play(ctx)
}

// listen takes every port at start (the game's, GameFabric's allocation
// callback's and, with rooms, the session callback's), so a port in use
// fails the start rather than the first allocation.
func listen(cfg Config) ([]net.Listener, error) {
	ports := []int{cfg.GamePort, cfg.AllocPort}
	if cfg.Rooms > 0 {
		ports = append(ports, cfg.SessionPort)
	}
	var lns []net.Listener
	for i, port := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(port)))
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return nil, fmt.Errorf("%s port: %w", []string{"game", "alloc", "session"}[i], err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// awaitAllocated registers the server and serves GameFabric's allocation
// callback until it is allocated (true), or ctx ends or the idle timeout
// passes (false, after deregistering; err says why, nil for an orderly
// stop). The callback endpoint is closed either way.
func (srv *server) awaitAllocated(ctx context.Context, allocLn net.Listener) (bool, error) {
	reg := newRegistry(srv.cfg, srv.client, srv.log, srv.gamePort, allocLn.Addr().(*net.TCPAddr).Port)
	regCtx, stopKeepAlives := context.WithCancel(ctx)
	defer stopKeepAlives()
	var registering sync.WaitGroup
	registering.Go(func() { reg.maintain(regCtx) })

	allocated := make(chan error, 1)
	cb := &callbackServer{token: reg.body.Callback.Token, payloadFile: srv.cfg.PayloadFile, serverName: srv.name, log: srv.log,
		stopKeepAlives: stopKeepAlives, allocated: allocated}
	hs := &http.Server{Handler: cb.routes(), ReadHeaderTimeout: 5 * time.Second, ErrorLog: srv.log}
	go func() { _ = hs.Serve(allocLn) }()
	// Shutdown lets the callback being answered finish, so the Allocator
	// still gets its answer; calling it twice is harmless.
	stopCallbacks := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}
	defer stopCallbacks()

	var idle <-chan time.Time
	if srv.cfg.IdleShutdown > 0 {
		idle = time.After(srv.cfg.IdleShutdown)
	}
	var err error
	ok := false
	select {
	case err = <-allocated:
		ok = err == nil
	case <-ctx.Done():
		srv.log.Print("asked to stop before any allocation")
	case <-idle:
		srv.log.Printf("not allocated within %s; shutting down", srv.cfg.IdleShutdown)
	}
	stopKeepAlives()
	registering.Wait()
	if !ok {
		reg.deregister(ctx)
		return false, err
	}
	// GameFabric's manual-registration guide: the callback endpoint "must
	// be stopped when the server becomes allocated".
	stopCallbacks()
	srv.log.Printf("allocation callback endpoint closed")
	if reg.registrations.Load() > 1 {
		// The registry dropped a registration and it was renewed: the
		// renewal may have raced with this allocation, so make sure no
		// registration outlives it.
		reg.deregister(ctx)
	}
	return true, nil
}

// newClient is game instance p's game-server SDK client.
func (srv *server) newClient(p gameserver.Payload, logger *log.Logger) (*gameserver.Client, error) {
	return gameserver.New(gameserver.Options{Payload: p, HTTPClient: srv.client, Logger: sdkLogger(logger),
		HealthPeriod: srv.cfg.HealthPeriod, EndPatience: endGrace})
}

// newSession is game instance p's session, on a client of its own; h is
// the rooms server's host, nil on a dedicated server.
func (srv *server) newSession(p gameserver.Payload, logger *log.Logger, h *host) (*session, error) {
	gs, err := srv.newClient(p, logger)
	if err != nil {
		return nil, err
	}
	s := &session{server: srv, table: srv.game.table(p.GameInstanceID), gs: gs, log: logger, host: h}
	if h != nil {
		s.over = make(chan error, 1)
	}
	return s, nil
}

// sdkLogger puts the SDK's records on the server's log, one line each
// under its prefix and timestamp.
func sdkLogger(l *log.Logger) *slog.Logger {
	return slog.New(slog.NewTextHandler(logLines{l}, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // the log prefix has the time
			}
			return a
		}}))
}

// logLines writes each slog record (one Write each) as a log line.
type logLines struct{ l *log.Logger }

func (w logLines) Write(p []byte) (int, error) {
	return len(p), w.l.Output(2, strings.TrimSuffix(string(p), "\n"))
}
