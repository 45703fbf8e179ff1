package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// run is the whole server: register, wait for an allocation, link, play
// one game, end it; or, with rooms (cfg.Rooms), host sessions until told
// to stop (rooms.go). It returns nil on every orderly exit (game over,
// shutdown requested through ctx, idle timeout) and an error otherwise.
func run(ctx context.Context, cfg Config) error {
	ls, err := listen(cfg)
	if err != nil {
		return err
	}
	if ls.session != nil {
		defer ls.session.Close() // harmless once served
	}
	gamePort, allocPort := ls.game.Addr().(*net.TCPAddr).Port, ls.alloc.Addr().(*net.TCPAddr).Port
	name := cfg.ServerName
	if name == "" {
		name = fmt.Sprintf("sample-%s-%d", cfg.Region, gamePort)
	}
	var out io.Writer = os.Stderr
	if cfg.Logs != nil {
		out = cfg.Logs
	}
	logger := log.New(out, name+" ", log.LstdFlags|log.Lmicroseconds)
	address := net.JoinHostPort(cfg.Host, strconv.Itoa(gamePort))
	logger.Printf("game port %s, alloc port %d", address, allocPort)
	if ls.session != nil {
		logger.Printf("hosting %d sessions at once; session callback on port %d", cfg.Rooms, ls.session.Addr().(*net.TCPAddr).Port)
	}

	// A payload left by an earlier process in this directory belongs to a
	// finished game and holds a dead credential.
	if err := os.Remove(cfg.PayloadFile); err == nil {
		logger.Printf("removed a stale %s", cfg.PayloadFile)
	}

	g := newGame(ls.game, name, cfg.Rooms > 0, logger)
	go g.serve()
	defer g.close()

	client := &http.Client{Timeout: 10 * time.Second}
	if ok, err := awaitAllocated(ctx, cfg, ls.alloc, client, logger, name, address); !ok {
		return err
	}
	// From here on the server is what a studio's would be: it reads the
	// payload file the sidecar wrote and talks to the backend through the
	// game-server SDK.
	payload, err := gameserver.WaitForPayload(ctx, cfg.PayloadFile, 0)
	if err != nil {
		g.finish()
		return err
	}
	if cfg.Rooms > 0 {
		cb, err := gameserver.NewSessionCallback(gameserver.SessionCallbackOptions{Logger: sdkLogger(logger)})
		if err != nil {
			g.finish()
			return err
		}
		h := &host{cfg: cfg, name: name, address: address, gamePort: gamePort, game: g, client: client, log: logger,
			callback: cb, live: map[string]*session{}}
		return h.run(ctx, payload, ls.session)
	}
	gs, err := newClient(cfg, payload, client, logger)
	if err != nil {
		g.finish()
		return err
	}
	s := &session{cfg: cfg, name: name, address: address, gamePort: gamePort, table: g.table(payload.GameInstanceID), log: logger, gs: gs}
	return s.play(ctx)
}

// listeners are the server's ports: its game's, GameFabric's allocation
// callback's and, with rooms, the session callback's.
type listeners struct{ game, alloc, session net.Listener }

// listen takes every port at start, so a port in use fails the start
// rather than the first allocation.
func listen(cfg Config) (listeners, error) {
	var ls listeners
	var err error
	if ls.game, err = net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.GamePort))); err != nil {
		return ls, fmt.Errorf("game port: %w", err)
	}
	if ls.alloc, err = net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.AllocPort))); err != nil {
		ls.game.Close()
		return ls, fmt.Errorf("alloc port: %w", err)
	}
	if cfg.Rooms > 0 {
		if ls.session, err = net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.SessionPort))); err != nil {
			ls.game.Close()
			ls.alloc.Close()
			return ls, fmt.Errorf("session port: %w", err)
		}
	}
	return ls, nil
}

// awaitAllocated registers the server and serves GameFabric's allocation
// callback until it is allocated (true), or ctx ends or the idle timeout
// passes (false, after deregistering; err says why, nil for an orderly
// stop). The callback endpoint is closed either way.
func awaitAllocated(ctx context.Context, cfg Config, allocLn net.Listener, client *http.Client, logger *log.Logger, name, address string) (bool, error) {
	allocPort := allocLn.Addr().(*net.TCPAddr).Port
	reg := newRegistry(cfg, client, logger, address, net.JoinHostPort(cfg.Host, strconv.Itoa(allocPort))+"/allocate", allocPort)
	regCtx, stopKeepAlives := context.WithCancel(ctx)
	defer stopKeepAlives()
	regDone := make(chan struct{})
	go func() {
		defer close(regDone)
		reg.maintain(regCtx)
	}()

	allocated, failed := make(chan struct{}, 1), make(chan error, 1)
	cb := &callbackServer{token: reg.body.Callback.Token, payloadFile: cfg.PayloadFile, serverName: name, log: logger,
		stopKeepAlives: stopKeepAlives, allocated: allocated, failed: failed}
	srv := &http.Server{Handler: cb.routes(), ReadHeaderTimeout: 5 * time.Second, ErrorLog: logger}
	go func() { _ = srv.Serve(allocLn) }()
	// Shutdown lets the callback being answered finish, so the allocator
	// still gets its answer; calling it twice is harmless.
	stopCallbacks := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	defer stopCallbacks()

	ok, err := awaitAllocation(ctx, cfg.IdleShutdown, allocated, failed, logger)
	stopKeepAlives()
	<-regDone
	if !ok {
		reg.deregister(ctx)
		return false, err
	}
	// GameFabric's manual-registration guide: the callback endpoint "must
	// be stopped when the server becomes allocated".
	stopCallbacks()
	logger.Printf("allocation callback endpoint closed")
	if reg.reRegistered() {
		// A renewal may have raced with this allocation; make sure no
		// registration outlives it.
		reg.deregister(ctx)
	}
	return true, nil
}

// newClient is one session's game-server SDK client.
func newClient(cfg Config, p gameserver.Payload, client *http.Client, logger *log.Logger) (*gameserver.Client, error) {
	return gameserver.New(gameserver.Options{Payload: p, HTTPClient: client, Logger: sdkLogger(logger),
		HealthPeriod: cfg.HealthPeriod, EndPatience: endGrace})
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

// awaitAllocation returns false without an error when asked to stop or
// left idle too long.
func awaitAllocation(ctx context.Context, idle time.Duration, allocated <-chan struct{}, failed <-chan error,
	logger *log.Logger) (bool, error) {
	var idleC <-chan time.Time
	if idle > 0 {
		t := time.NewTimer(idle)
		defer t.Stop()
		idleC = t.C
	}
	select {
	case <-allocated:
		return true, nil
	case err := <-failed:
		return false, err
	case <-ctx.Done():
		logger.Print("asked to stop before any allocation")
		return false, nil
	case <-idleC:
		logger.Printf("not allocated within %s; shutting down", idle)
		return false, nil
	}
}

// newToken is the callback token: 128 random bits, hex.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}
