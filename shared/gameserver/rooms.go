package gameserver

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

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
// instances (sessions) at once: LinkRequest.Rooms. Capacity counts the
// linking instance itself (4 = this session and 3 more); 0 closes the
// server to new sessions while the ones it hosts play on. The service
// places each further session by POSTing its payload to CallbackURL with
// "Authorization: Bearer CallbackToken" (SessionCallback answers it).
//
// CallbackToken is a credential: String, GoString and LogValue leave it
// out. Its JSON, the link body, carries it: keep that off logs.
type RoomOffer struct {
	Capacity int `json:"capacity"`
	// CallbackURL is required when Capacity >= 2: http(s) to the host
	// GameFabric allocated for the instance (any port).
	CallbackURL string `json:"callbackUrl,omitempty"`
	// CallbackToken is required when Capacity >= 2: 32-1024 characters of
	// RFC 6750 b64token (NewCallbackToken mints one).
	CallbackToken string `json:"callbackToken,omitempty"`
}

func (o RoomOffer) String() string {
	return fmt.Sprintf("%d rooms (callback %s)", o.Capacity, o.CallbackURL)
}

// GoString keeps %#v from printing the token.
func (o RoomOffer) GoString() string {
	return fmt.Sprintf("gameserver.RoomOffer{Capacity:%d, CallbackURL:%q, token redacted}", o.Capacity, o.CallbackURL)
}

// LogValue keeps the token out of slog output.
func (o RoomOffer) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("capacity", o.Capacity), slog.String("callbackUrl", o.CallbackURL))
}

// Validate checks what the link route checks, but the host, which only
// the service knows, and names every problem at once, as the route does
// (rooms.capacity, rooms.callbackUrl, rooms.callbackToken). It never
// quotes the token.
func (o RoomOffer) Validate() error {
	var problems []string
	if o.Capacity < 0 || o.Capacity > MaxRooms {
		problems = append(problems, fmt.Sprintf("rooms.capacity must be 0 to %d, got %d", MaxRooms, o.Capacity))
	}
	hosts := o.Capacity >= 2
	switch {
	case o.CallbackURL == "" && hosts:
		problems = append(problems, "rooms.callbackUrl is required when rooms.capacity is 2 or more")
	case o.CallbackURL != "":
		if msg := callbackURLProblem(o.CallbackURL); msg != "" {
			problems = append(problems, "rooms.callbackUrl "+msg)
		}
	}
	switch {
	case o.CallbackToken == "" && hosts:
		problems = append(problems, "rooms.callbackToken is required when rooms.capacity is 2 or more")
	case o.CallbackToken != "":
		if msg := callbackTokenProblem(o.CallbackToken); msg != "" {
			problems = append(problems, "rooms.callbackToken "+msg)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid room offer: %s", strings.Join(problems, "; "))
	}
	return nil
}

func callbackURLProblem(raw string) string {
	if len(raw) > MaxCallbackURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxCallbackURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		// A URL with userinfo may hold a password: not quoted.
		return "must be an absolute http(s) URL without userinfo or fragment"
	}
	return ""
}

// callbackTokenProblem describes what is wrong with a token without
// quoting it.
func callbackTokenProblem(token string) string {
	if len(token) < MinCallbackTokenLength || len(token) > MaxCallbackTokenLength || !gameinstance.IsBearerToken(token) {
		return fmt.Sprintf("must be %d-%d characters of RFC 6750 b64token (letters, digits, - . _ ~ + /, then = padding)",
			MinCallbackTokenLength, MaxCallbackTokenLength)
	}
	return ""
}

// NewCallbackToken mints a session-callback token: 256 random bits,
// base64url without padding (43 characters), a valid b64token.
func NewCallbackToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return base64.RawURLEncoding.EncodeToString(b)
}
