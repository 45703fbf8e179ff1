// Package rooms is the room pool: several game instances per game server
// (Agones' rooms Counter, GameLift's server processes per instance). A game
// server offers rooms when it links; the allocation use case asks the pool
// for a free room in a region before asking the region's Allocator. The
// pool follows Agones' allocator: a pure find (the pool's servers with a
// free room, in scheduling order), then a claim (one conditional write that
// takes a room, tied to the instance's claim), then a bounded retry (a room
// lost to a concurrent allocation moves on to the next server, not to the
// Allocator). A taken room is confirmed by the game server's session
// callback, or given back.
package rooms

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Store keeps the game servers' records (shared/store.GameServers).
type Store interface {
	// Candidates lists up to limit servers of pool with a free room, in
	// order, after cursor; next is "" when there are no more.
	Candidates(ctx context.Context, pool gameinstance.RoomPool, order gameinstance.Scheduling, limit int, cursor string) (servers []gameinstance.GameServer, next string, err error)
	// Take holds a room on gs for the claim: gameinstance.ErrNoRoom,
	// gameinstance.ErrClaimLost, gameinstance.ErrRoomInDoubt, or another
	// error when it was not taken.
	Take(ctx context.Context, id, claimID string, gs gameinstance.GameServer) error
	// GiveBack releases the room after a failed callback, counting the
	// failure (closed: this closed the server); gameinstance.ErrRoomInDoubt
	// when it may still be held.
	GiveBack(ctx context.Context, id, address string) (closed bool, err error)
	// CallbackSucceeded ends a run of failed callbacks.
	CallbackSucceeded(ctx context.Context, address string) error
}

// Caller makes a session callback (shared/roomcallback).
type Caller interface {
	Call(ctx context.Context, url, token string, payload allocation.Payload) CallResult
}

// CallResult is how a session callback went.
type CallResult struct {
	Status   int  // the HTTP status; 0 when no answer came
	OK       bool // a 2xx: the server took the session
	TimedOut bool // no answer within the timeout
	// Sent: the request may have reached the server (anything but a
	// refused connection), so a failed call may have started a session.
	Sent     bool
	Error    string // why it failed, without the URL or any token
	Duration time.Duration
}

// Pool is the room pool.
type Pool struct {
	Store  Store
	Caller Caller
	// CallbackTimeout bounds one session callback (ROOM_CALLBACK_TIMEOUT,
	// which config resolves; the pool does not fill it in).
	CallbackTimeout time.Duration
}

var (
	_ allocation.Rooms      = (*Pool)(nil)
	_ allocation.RoomLister = (*Pool)(nil)
)

// ListRooms is the first page Place would read of pool's servers with a
// free room, read ahead of it (see allocation.RoomLister).
func (p *Pool) ListRooms(ctx context.Context, pool gameinstance.RoomPool, order gameinstance.Scheduling) allocation.RoomListing {
	var l allocation.RoomListing
	l.Servers, l.Next, l.Err = p.Store.Candidates(ctx, pool, order, pageSize, "")
	return l
}

// Bounds of one placement: servers read per page, pages read (a pass that
// lost every room to concurrent allocations reads again, as the index may
// lag), rooms lost to races before giving up, and time.
const (
	pageSize = 10
	maxPages = 4
	maxTakes = 25
	// minCallback is the least time a callback is worth starting with.
	minCallback = 100 * time.Millisecond
	// giveBackReserve is kept before the deadline to give a room back, and
	// giveBackTimeout bounds that write (detached from the caller).
	giveBackReserve = 500 * time.Millisecond
	giveBackTimeout = 2 * time.Second
)

// Place puts the claimed instance in a free room of req.Pool (see
// allocation.Rooms). A failed read of the candidates places nothing: the
// region's Allocator is asked next, as if there were no room.
func (p *Pool) Place(ctx context.Context, req allocation.RoomRequest) allocation.RoomResult {
	var res allocation.RoomResult
	log := logging.FromContext(ctx).With("gameInstanceId", req.GameInstanceID, "region", req.Pool.Region)
	called := map[string]bool{}
	cursor, takes, lost := "", 0, false
	for page := 0; page < maxPages && len(res.Attempts) < len(req.Payloads); page++ {
		var l allocation.RoomListing
		if page == 0 && req.Listed != nil {
			l = <-req.Listed
		} else {
			l.Servers, l.Next, l.Err = p.Store.Candidates(ctx, req.Pool, req.Scheduling, pageSize, cursor)
		}
		servers, next, err := l.Servers, l.Next, l.Err
		if err != nil {
			log.Warn("rooms: listing game servers with a free room failed; asking the Allocator", "error", err)
			return res
		}
		for _, gs := range servers {
			if called[gs.Address] || gs.CallbackURL == "" {
				continue
			}
			if len(res.Attempts) == len(req.Payloads) || takes == maxTakes || p.callbackTime(req.Deadline) < minCallback {
				return res
			}
			takes++
			err := p.Store.Take(ctx, req.GameInstanceID, req.ClaimID, gs)
			switch {
			case errors.Is(err, gameinstance.ErrNoRoom):
				lost = true // taken by a concurrent allocation since the read
				continue
			case errors.Is(err, gameinstance.ErrClaimLost), errors.Is(err, gameinstance.ErrRoomInDoubt):
				res.Err = err
				return res
			case err != nil:
				log.Warn("rooms: taking a room failed; asking the Allocator", "server", gs.Address, "error", err)
				return res
			}
			called[gs.Address] = true
			if p.call(ctx, log, req, gs, &res) {
				return res
			}
		}
		switch {
		case next != "":
			cursor = next
		case lost:
			cursor, lost = "", false // every room went to others: read again
		default:
			return res
		}
	}
	return res
}

// call makes the session callback to gs, whose room the claim holds, and
// records it as an attempt. It reports whether the plan is over: placed,
// or the room could not be given back.
func (p *Pool) call(ctx context.Context, log *slog.Logger, req allocation.RoomRequest, gs gameinstance.GameServer, res *allocation.RoomResult) bool {
	try := len(res.Attempts)
	limit := min(p.CallbackTimeout, p.callbackTime(req.Deadline))
	cctx, cancel := context.WithTimeout(ctx, limit)
	r := p.Caller.Call(cctx, gs.CallbackURL, gs.CallbackToken, req.Payloads[try])
	cancel()
	if r.TimedOut {
		r.Error = fmt.Sprintf("session callback got no answer within %s", limit.Round(time.Millisecond))
	}
	a := gameinstance.Attempt{Region: req.Pool.Region, Placement: gameinstance.PlacementRoom, Server: gs.Address,
		Status: r.Status, Error: r.Error, DurationMs: r.Duration.Milliseconds(),
		// No answer to a callback that was sent: the server may have
		// started a session that will never link.
		SuspectedOrphan: !r.OK && r.Sent && r.Status == 0}
	res.Attempts = append(res.Attempts, a)
	log.Info("room attempt", "server", gs.Address, "status", r.Status, "error", r.Error, "durationMs", a.DurationMs)
	if r.OK {
		if gs.CallbackFailures > 0 {
			if err := p.Store.CallbackSucceeded(ctx, gs.Address); err != nil {
				log.Warn("rooms: resetting the failed callbacks count failed", "server", gs.Address, "error", err)
			}
		}
		res.Server, res.Address, res.Try = gs.Server(), gs.Address, try
		return true
	}
	gctx, gcancel := context.WithTimeout(context.WithoutCancel(ctx), giveBackTimeout)
	defer gcancel()
	closed, err := p.Store.GiveBack(gctx, req.GameInstanceID, gs.Address)
	if err != nil {
		res.Err = err
		return true
	}
	if closed {
		log.Warn("rooms: game server closed to new sessions: its session callbacks failed twice in a row", "server", gs.Address)
	}
	return false
}

// callbackTime is how long a callback may take before deadline, keeping
// time to give its room back.
func (p *Pool) callbackTime(deadline time.Time) time.Duration {
	return time.Until(deadline) - giveBackReserve
}
