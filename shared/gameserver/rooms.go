package gameserver

import (
	"crypto/rand"
	"encoding/base64"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// MaxRooms is the largest room capacity a server may offer.
const MaxRooms = gameinstance.MaxRoomCapacity

// Bounds of RoomOffer's fields: the link route's.
const (
	MinCallbackTokenLength = gameinstance.MinCallbackToken
	MaxCallbackTokenLength = gameinstance.MaxCallbackToken
	MaxCallbackURLLength   = gameinstance.MaxCallbackURLLength
)

// RoomOffer is what a server offers at link to host several game
// instances (sessions) at once: LinkRequest.Rooms, the service's own shape
// (gameinstance.RoomOffer) and rules. Capacity counts the linking instance
// itself (4 = this session and 3 more); 0 closes the server to new
// sessions while the ones it hosts play on. The service places each
// further session by POSTing its payload to CallbackURL with
// "Authorization: Bearer CallbackToken" (SessionCallback answers it).
// Validate checks what the link route checks but the host, which only the
// service knows, naming every problem at once. CallbackToken is a
// credential: String, GoString and LogValue leave it out. Its JSON, the
// link body, carries it: keep that off logs.
type RoomOffer = gameinstance.RoomOffer

// NewCallbackToken mints a session-callback token: 256 random bits,
// base64url without padding (43 characters), a valid b64token.
func NewCallbackToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return base64.RawURLEncoding.EncodeToString(b)
}
