package gameinstance

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Placement says how an allocation got its game server.
type Placement string

const (
	// PlacementAllocator: GameFabric's Allocator handed out a whole server.
	PlacementAllocator Placement = "allocator"
	// PlacementRoom: a free room on a game server an earlier allocation
	// brought, which offered rooms when it linked (Agones' rooms Counter).
	PlacementRoom Placement = "room"
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

// Limits of a game server's room offer.
const (
	MaxRoomCapacity      = 256
	MinCallbackToken     = 32
	MaxCallbackToken     = 1024
	MaxCallbackURLLength = 2048
)

// RoomOffer is what a game server offers when it links (the link body's
// "rooms", and the Go SDK's LinkRequest.Rooms): Capacity sessions at once,
// the linking instance included (1 = dedicated), each new one announced by
// POST CallbackURL with Authorization: Bearer CallbackToken. Capacity 0
// closes the server to new sessions. The token is a credential: String,
// GoString and LogValue leave it out; the JSON carries it, so keep that off
// logs.
type RoomOffer struct {
	Capacity int `json:"capacity"`
	// CallbackURL is required from capacity 2: http(s) to the host
	// GameFabric allocated for the instance (any port).
	CallbackURL string `json:"callbackUrl,omitempty"`
	// CallbackToken is required from capacity 2: an RFC 6750 b64token.
	CallbackToken string `json:"callbackToken,omitempty"`
}

func (o RoomOffer) String() string {
	return fmt.Sprintf("%d rooms (callback %s)", o.Capacity, o.CallbackURL)
}

// GoString keeps %#v from printing the token.
func (o RoomOffer) GoString() string {
	return fmt.Sprintf("RoomOffer{Capacity:%d, CallbackURL:%q, token redacted}", o.Capacity, o.CallbackURL)
}

// LogValue keeps the token out of slog output.
func (o RoomOffer) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("capacity", o.Capacity), slog.String("callbackUrl", o.CallbackURL))
}

// Problems are what is wrong with the offer in itself, each naming its
// field (rooms.capacity, rooms.callbackUrl, rooms.callbackToken), none
// quoting the token. Whether the URL leads to the right host takes the
// instance's record (shared/lifecycle).
func (o RoomOffer) Problems() []string {
	var problems []string
	if o.Capacity < 0 || o.Capacity > MaxRoomCapacity {
		problems = append(problems, fmt.Sprintf("rooms.capacity must be 0-%d (the sessions the server hosts at once, this one included; 0 closes it), got %d",
			MaxRoomCapacity, o.Capacity))
	}
	// The callback is required once there is a room beyond this session.
	for _, f := range []struct {
		name, value string
		problem     func(string) string
	}{{"rooms.callbackUrl", o.CallbackURL, callbackURLProblem}, {"rooms.callbackToken", o.CallbackToken, CallbackTokenProblem}} {
		switch {
		case f.value == "" && o.Capacity >= 2:
			problems = append(problems, f.name+" is required when rooms.capacity is 2 or more")
		case f.value != "":
			if p := f.problem(f.value); p != "" {
				problems = append(problems, f.name+" "+p)
			}
		}
	}
	return problems
}

// Validate is Problems as one error, nil when there is none.
func (o RoomOffer) Validate() error {
	if p := o.Problems(); len(p) > 0 {
		return fmt.Errorf("invalid room offer: %s", strings.Join(p, "; "))
	}
	return nil
}

// CallbackURL is raw as a callback URL, or why it is not one.
func CallbackURL(raw string) (*url.URL, string) {
	if len(raw) > MaxCallbackURLLength {
		return nil, fmt.Sprintf("must be at most %d characters", MaxCallbackURLLength)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return nil, "must be an absolute http:// or https:// URL"
	case u.User != nil || u.Fragment != "":
		// userinfo may hold a password: never quoted.
		return nil, "must not carry credentials or a fragment"
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, "must have a port of 1-65535"
		}
	}
	return u, ""
}

func callbackURLProblem(raw string) string {
	_, p := CallbackURL(raw)
	return p
}

// CallbackTokenProblem says what is wrong with token as a callback token,
// without quoting it; "" when nothing is.
func CallbackTokenProblem(token string) string {
	if len(token) < MinCallbackToken || len(token) > MaxCallbackToken || !IsBearerToken(token) {
		return fmt.Sprintf("must be %d-%d characters of letters, digits and - . _ ~ + / (then = padding)", MinCallbackToken, MaxCallbackToken)
	}
	return ""
}

// GameServer is the record of a game server that offered rooms: one per
// server, keyed by its address, holding which game instances use its
// rooms. Its counts always agree with Sessions: every write that adds or
// removes a session moves them in the same conditional write.
type GameServer struct {
	Address     string // the key: the server's address as GameFabric answered it
	Region      string
	Environment string
	ArmadaSet   string
	// IP and Ports are as the allocation that brought it recorded them:
	// what a room placement answers as its server.
	IP       string
	Ports    map[string]int
	Capacity int
	InUse    int
	// Accepting: it takes new sessions. A closed server keeps its sessions.
	Accepting    bool
	ClosedReason string
	CallbackURL  string
	// CallbackToken is a credential: it never prints.
	CallbackToken string
	// CallbackFailures counts session callbacks refused or timed out in a
	// row; at RoomCallbackFailureLimit the server stops accepting.
	CallbackFailures int
	// Sessions are the game instances holding a room on it.
	Sessions  []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RoomCallbackFailureLimit is how many failed session callbacks in a row
// close a game server to new sessions.
const RoomCallbackFailureLimit = 2

// Free is how many more sessions the server takes (negative when its
// capacity was lowered below the rooms in use).
func (g GameServer) Free() int { return g.Capacity - g.InUse }

// Server is where players of its sessions connect.
func (g GameServer) Server() *Server {
	return &Server{Address: g.Address, IP: g.IP, Ports: g.Ports}
}

func (g GameServer) String() string {
	return fmt.Sprintf("game server %s (%s, %d/%d rooms in use, accepting %v)", g.Address, g.Region, g.InUse, g.Capacity, g.Accepting)
}

// GoString keeps %#v from printing the callback token.
func (g GameServer) GoString() string { return "gameinstance.GameServer{" + g.String() + "}" }

// LogValue keeps the callback token out of slog output.
func (g GameServer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("address", g.Address), slog.String("region", g.Region),
		slog.Int("capacity", g.Capacity), slog.Int("inUse", g.InUse), slog.Bool("accepting", g.Accepting))
}

// RoomPool names the game servers one allocation may share: the same
// region, environment and armada set.
type RoomPool struct {
	Region, Environment, ArmadaSet string
}

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
