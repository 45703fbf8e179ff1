package gameinstance

import (
	"fmt"
	"log/slog"
	"time"
)

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
