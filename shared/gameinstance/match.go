package gameinstance

import "encoding/json"

// Limits on what is kept of a FlexMatch match. FlexMatch makes matches of
// up to 200 players; their MatchmakingSucceeded detail (every player twice,
// in its ticket and in gameSessionInfo, with session ids) stays near 60 KB,
// so a 200-player match fits with room to spare, and a kept detail with the
// game server's address added stays far below EventBridge's 256 KB entry.
const (
	MaxMatchPlayers     = 200
	MaxMatchDetailBytes = 128 << 10
)

// Match is what the service keeps of a FlexMatch MatchmakingSucceeded
// event: enough to publish it again, with its game server, once the match's
// game instance (whose id is the matchId) is placed, and to tell its
// tickets when it cannot be.
type Match struct {
	ID string
	// EventID is the EventBridge id of the event first handled.
	EventID          string
	ConfigurationArn string
	// Detail is the event's detail as it arrived (compact JSON), or empty
	// when it was too large to keep (the match then failed).
	Detail    json.RawMessage
	TicketIDs []string
}
