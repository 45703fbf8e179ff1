package eventcatalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// MatchDetail is a FlexMatch MatchmakingSucceeded event's detail published
// again once its match is placed: what FlexMatch sent, with the game
// server's ipAddress and port in gameSessionInfo, gameSessionArn empty
// (there is no GameLift game session), type the configured event name and
// an idempotencyKey, as GameFabric's FlexMatch guide and Nitrado's Lambda
// publish it. A game service written against either changes only the
// event it listens to.
type MatchDetail struct {
	MatchID        string
	IdempotencyKey string
	Body           json.RawMessage
}

// ErrNoMatchDetail: the match's event was not kept (it was too large).
var ErrNoMatchDetail = errors.New("the match's event detail was not kept")

// Matchmaking is the event name (MATCHMAKING_EVENT_NAME) of m published
// again for placed, the GameServerAllocated event of m's instance.
func Matchmaking(name string, m gameinstance.Match, placed Event) (Event, error) {
	if len(m.Detail) == 0 {
		return Event{}, ErrNoMatchDetail
	}
	var detail map[string]json.RawMessage
	if err := json.Unmarshal(m.Detail, &detail); err != nil || detail == nil {
		return Event{}, fmt.Errorf("kept detail of match %s is no JSON object: %v", m.ID, err)
	}
	info := map[string]json.RawMessage{}
	if raw, ok := detail["gameSessionInfo"]; ok {
		// A gameSessionInfo that is no object is replaced, not kept.
		_ = json.Unmarshal(raw, &info)
		if info == nil {
			info = map[string]json.RawMessage{}
		}
	}
	ip, port := endpoint(placed.Instance.Server)
	set := func(into map[string]json.RawMessage, key string, v any) {
		b, _ := marshal(v) // strings and ints: cannot fail
		into[key] = b
	}
	set(info, "ipAddress", ip)
	if port > 0 {
		set(info, "port", port)
	} else {
		// No port to name: none rather than one FlexMatch's event carried.
		delete(info, "port")
	}
	set(info, "gameSessionArn", "")
	key := fmt.Sprintf("%s:%d:%s", m.ID, placed.Instance.Version, name)
	set(detail, "type", name)
	set(detail, "idempotencyKey", key)
	body, _ := marshal(info)
	detail["gameSessionInfo"] = body
	body, err := marshal(detail)
	if err != nil {
		return Event{}, fmt.Errorf("match %s: %w", m.ID, err)
	}
	return Event{Type: DetailType(name), Time: placed.Time, Match: &MatchDetail{MatchID: m.ID, IdempotencyKey: key, Body: body}}, nil
}

// marshal is json.Marshal without its HTML escaping, which would rewrite
// every < > & of what FlexMatch sent as \u003c... (6 bytes each): the kept
// detail is published as it came, and the event outgrows it only by the
// server's address, so a kept detail (at most MaxMatchDetailBytes) always
// fits EventBridge's 256 KB entry.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// endpoint is where players connect: the server's IP and its game port.
func endpoint(s *gameinstance.Server) (string, int) {
	ip, _, port := gameinstance.Endpoint(s)
	return ip, port
}
