package allocation

import (
	"context"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// RoomTries is how many game servers with a free room one allocation calls
// back per region before it asks the region's Allocator.
const RoomTries = 2

// Rooms is the room pool: free rooms on game servers that earlier
// allocations brought and that offered rooms when they linked (Agones'
// rooms Counter). Options without one place every instance on a whole
// server from the Allocator.
type Rooms interface {
	// Place puts the claimed instance in a free room of req.Pool: it takes
	// a room (one conditional write, tied to the claim), calls the game
	// server back with the session's payload and, if the server does not
	// take it, gives the room back and tries the next server, calling at
	// most len(req.Payloads) servers. A room lost to a concurrent
	// allocation is not a try: the next candidate is. Attempts has one
	// entry per server called.
	Place(ctx context.Context, req RoomRequest) RoomResult
}

// RoomRequest asks the room pool for one session.
type RoomRequest struct {
	GameInstanceID string
	// ClaimID ties the room to the claim: a room is taken only while the
	// claim is this call's.
	ClaimID    string
	Pool       gameinstance.RoomPool
	Scheduling gameinstance.Scheduling
	// Payloads are the session's payload for each server that may be
	// called, each with its own PartnerGameToken, so a server that took
	// the session too late cannot link to the instance another holds.
	Payloads []Payload
	// Deadline ends every take and callback.
	Deadline time.Time
	// Listed, when not nil, delivers the first page of the pool's servers
	// with a free room, listed while the claim was being written (see
	// RoomLister), in place of listing it now.
	Listed <-chan RoomListing
}

// RoomListing is a page of a pool's game servers with a free room, in
// scheduling order; Next continues it ("" when there are no more).
type RoomListing struct {
	Servers []gameinstance.GameServer
	Next    string
	Err     error
}

// RoomLister is a room pool that lists a pool's free rooms on their own.
// Allocate lists the first region's while it writes the claim, so the
// listing's round trip overlaps the claim's instead of following it; the
// list is only read (every take is conditional), so it may be listed before
// the claim is known to hold. A claim that turns out to be a replay wastes
// that read.
type RoomLister interface {
	ListRooms(ctx context.Context, pool gameinstance.RoomPool, order gameinstance.Scheduling) RoomListing
}

// RoomResult is what the room pool did.
type RoomResult struct {
	// Server is where the instance was placed, nil when it was not;
	// Address is its game-server record and Try the payload it took.
	Server  *gameinstance.Server
	Address string
	Try     int
	// Attempts has one entry per server called back.
	Attempts []gameinstance.Attempt
	// Err: the pool cannot tell whether the claim still holds a room (a
	// write whose outcome is unknown), or the claim was lost. The
	// allocation stops there: its claim stays in doubt, which replays
	// answer ALLOCATION_IN_PROGRESS and the health sweep resolves
	// (releasing the room) if no server links.
	Err error
}
