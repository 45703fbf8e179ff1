package gameinstance

import (
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
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
