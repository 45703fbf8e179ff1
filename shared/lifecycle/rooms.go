package lifecycle

import (
	"fmt"
	"net"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Offer is a link's room offer applied to rec, the instance as the link
// leaves it: the instance holds a room on its server's record (RoomJoin)
// or, with capacity 0, closes it (RoomClose). Every problem is reported at
// once, each naming its field. The callback URL must lead to the host
// GameFabric allocated for the instance, so that no game server can make
// the service call anywhere else; an instance whose server was never
// recorded from GameFabric's answer (recovered by its own link) therefore
// cannot offer rooms.
func (p Policy) Offer(rec gameinstance.Record, offer gameinstance.RoomOffer) (gameinstance.Record, *gameinstance.RoomChange, error) {
	problems := offerProblems(rec, offer)
	if len(problems) > 0 {
		return rec, nil, invalidOffer(strings.Join(problems, "; "))
	}
	change := &gameinstance.RoomChange{Op: gameinstance.RoomJoin, Address: rec.Server.Address, SessionID: rec.GameInstanceID, Offer: offer,
		Pool:   gameinstance.RoomPool{Region: rec.Region, Environment: rec.Environment, ArmadaSet: rec.ArmadaSet},
		Server: *rec.Server}
	if offer.Capacity == 0 {
		if !rec.HoldsRoom() || rec.RoomServer != rec.Server.Address {
			return rec, nil, noRoomToClose()
		}
		change.Op = gameinstance.RoomClose
		return rec, change, nil
	}
	rec.RoomServer = rec.Server.Address
	return rec, change, nil
}

// noRoomToClose answers capacity 0 from an instance without a room.
func noRoomToClose() error {
	return invalidOffer("rooms.capacity 0 closes a game server that offered rooms, and this game instance holds no room on one")
}

func invalidOffer(msg string) error {
	return &gameinstance.Error{Code: gameinstance.CodeInvalidRequest, Message: msg}
}

func offerProblems(rec gameinstance.Record, o gameinstance.RoomOffer) []string {
	problems := o.Problems()
	switch {
	case rec.Server == nil || rec.RecoveredByLink:
		problems = append(problems, "rooms cannot be offered by this game server: its allocation was recovered by its link, "+
			"so the host GameFabric allocated is not known; link without rooms")
	case o.CallbackURL != "":
		if u, bad := gameinstance.CallbackURL(o.CallbackURL); bad == "" && !allocatedHost(u.Hostname(), rec.Server) {
			problems = append(problems, fmt.Sprintf("rooms.callbackUrl must lead to the host GameFabric allocated for this game instance (%s), any port",
				strings.Join(allocatedHosts(rec.Server), " or ")))
		}
	}
	return problems
}

// allocatedHost: host is one the allocation recorded for the server.
func allocatedHost(host string, s *gameinstance.Server) bool {
	for _, h := range allocatedHosts(s) {
		if sameHost(host, h) {
			return true
		}
	}
	return false
}

// allocatedHosts are the hosts the allocation recorded for the server.
func allocatedHosts(s *gameinstance.Server) []string {
	var hosts []string
	if s.IP != "" {
		hosts = append(hosts, s.IP)
	}
	if h, _, err := net.SplitHostPort(s.Address); err == nil && h != "" && !sameHost(h, s.IP) {
		hosts = append(hosts, h)
	}
	return hosts
}

// sameHost compares host names case-insensitively and IP addresses by
// value (::1 is 0:0::1).
func sameHost(a, b string) bool {
	if ia, ib := net.ParseIP(a), net.ParseIP(b); ia != nil && ib != nil {
		return ia.Equal(ib)
	}
	return a != "" && strings.EqualFold(a, b)
}

// released is the room an instance gives back when a write moves it out of
// a live state (ended, Unhealthy, an in-doubt claim failed): nil when it
// held none or still does. A session that went Unhealthy also closes its
// server to new sessions: a server that lets its sessions die, or never
// links one it took, should not be given more.
func released(old, next gameinstance.Record) *gameinstance.RoomChange {
	if !old.HoldsRoom() || next.HoldsRoom() {
		return nil
	}
	return &gameinstance.RoomChange{Op: gameinstance.RoomRelease, Address: old.RoomServer, SessionID: old.GameInstanceID,
		Close: next.State == gameinstance.StateUnhealthy, Reason: gameinstance.ClosedSessionUnhealthy}
}
