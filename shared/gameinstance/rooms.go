package gameinstance

import (
	"errors"
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// Placement says how an allocation got its game server.
type Placement = apishape.Placement

const (
	// PlacementAllocator: GameFabric's Allocator handed out a whole server.
	PlacementAllocator Placement = "allocator"
	// PlacementRoom: a free room on a game server an earlier allocation
	// brought, which offered rooms when it linked (Agones' rooms Counter).
	PlacementRoom Placement = "room"
)

// AllocatorKind is the kind of Allocator an attempt asked.
type AllocatorKind = apishape.AllocatorKind

const (
	AllocatorGameFabric = apishape.AllocatorGameFabric
	AllocatorAgones     = apishape.AllocatorAgones
)

// Scheduling orders the game servers with a free room (Agones' names).
type Scheduling string

const (
	// SchedulingPacked fills the fullest servers first: fewest free rooms
	// first. The default.
	SchedulingPacked Scheduling = "Packed"
	// SchedulingDistributed spreads sessions: most free rooms first.
	SchedulingDistributed Scheduling = "Distributed"
)

// RoomOp is what a lifecycle write does to a game server's record.
type RoomOp int

const (
	// RoomJoin: a link offers rooms; the linking instance holds one.
	RoomJoin RoomOp = iota + 1
	// RoomClose: a link offers capacity 0; the server stops accepting.
	RoomClose
	// RoomRelease: the instance left a live state; its room comes back.
	RoomRelease
)

// RoomChange is the game-server record write that goes with one write of
// an instance's record, in the same transaction.
type RoomChange struct {
	Op        RoomOp
	Address   string // the game server's record
	SessionID string // the instance
	// Offer is a link's offer (RoomJoin, RoomClose).
	Offer RoomOffer
	// Pool and Server identify the server on RoomJoin: the instance's own
	// region, attributes and server as its allocation recorded them.
	Pool   RoomPool
	Server Server
	// Close, on RoomRelease, also stops the server accepting, for Reason.
	Close  bool
	Reason string
}

// Reasons a game server stopped accepting new sessions.
const (
	ClosedByServer         = "ClosedByServer"   // it offered capacity 0
	ClosedCallbackFailures = "CallbackFailures" // its session callback failed twice in a row
	ClosedSessionUnhealthy = "SessionUnhealthy" // one of its sessions went Unhealthy
)

// Room store errors.
var (
	// ErrRoomNotHeld: a capacity 0 offer from an instance that holds no
	// room on its server's record (the server never offered rooms with it).
	ErrRoomNotHeld = errors.New("the game instance holds no room on its game server's record")
	// ErrNoRoom: the game server has no room for the session now (full,
	// closed, or no longer in the pool).
	ErrNoRoom = errors.New("no free room on the game server")
	// ErrRoomInDoubt: a room write's outcome is unknown: the session may
	// or may not hold the room.
	ErrRoomInDoubt = errors.New("whether the room is held is unknown")
)

// CapacityError: an offer's capacity is below the rooms the server's
// sessions use, which would put it over capacity; nothing was changed.
type CapacityError struct{ Capacity, InUse int }

func (e *CapacityError) Error() string {
	return fmt.Sprintf("rooms.capacity %d is below the %d game instances this game server hosts now; "+
		"offer 0 to close it, and a smaller capacity once they have ended", e.Capacity, e.InUse)
}
