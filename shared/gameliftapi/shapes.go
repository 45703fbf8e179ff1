package gameliftapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// StartInput is StartGameSessionPlacementInput, read and checked against
// GameLift's limits (botocore's and the Go SDK's service model).
type StartInput struct {
	PlacementID      string                       `json:"p"`
	QueueName        string                       `json:"q"`
	Session          gameinstance.GameSession     `json:"s"`
	Latencies        []gameinstance.RegionLatency `json:"l,omitempty"`
	LocationOrder    []string                     `json:"o,omitempty"`
	FallbackStrategy string                       `json:"f,omitempty"`
}

// GameLift's limits, and ours where the game server's payload needs one.
const (
	maxPlacementID     = 48
	maxQueueNameOrArn  = 256
	maxProperties      = 16
	maxPropertyKey     = 32
	maxPropertyValue   = 96
	maxSessionName     = 1024
	maxSessionData     = 262144
	maxPlayerID        = 1024
	maxPlayerData      = 2048
	maxRegionID        = 1024
	maxLocationOrder   = 10
	maxLocation        = 64
	maxLatencyEntries  = 2000
	maxDesiredSessions = 200
	maxLatencyMs       = 60000
	// maxSessionBytes bounds the game session's fields together, as JSON:
	// they travel in the game server's payload, which the game server SDK
	// (shared/gameserver) reads up to 64 KiB.
	maxSessionBytes = 48 << 10
)

// Fallback strategies of PriorityConfigurationOverride.
const (
	fallbackDefault = "DEFAULT_AFTER_SINGLE_PASS"
	fallbackNone    = "NONE"
)

// fields reads one structure's members, collecting every problem.
type fields struct {
	m        map[string]any
	prefix   string
	problems *[]string
}

func (f fields) add(format string, args ...any) {
	*f.problems = append(*f.problems, f.prefix+fmt.Sprintf(format, args...))
}

// str is member name as a string of min-max characters; "" when absent
// (then required says so) or wrong.
func (f fields) str(name string, minLen, maxLen int, required bool) string {
	v, ok := f.m[name]
	if !ok {
		if required {
			f.add("%s is required", name)
		}
		return ""
	}
	s, ok := v.(string)
	if n := utf8.RuneCountInString(s); !ok || n < minLen || n > maxLen {
		f.add("%s must be a string of %d-%d characters", name, minLen, maxLen)
		return ""
	}
	return s
}

// integer is member name as a whole number within lo-hi.
func (f fields) integer(name string, lo, hi int64, required bool) *int64 {
	v, ok := f.m[name]
	if !ok {
		if required {
			f.add("%s is required", name)
		}
		return nil
	}
	i, ok := v.(int64)
	if !ok || i < lo || i > hi {
		f.add("%s must be an integer of %d-%d", name, lo, hi)
		return nil
	}
	return &i
}

// number is member name as a number within lo-hi.
func (f fields) number(name string, lo, hi float64) (float64, bool) {
	var x float64
	switch v := f.m[name].(type) {
	case int64:
		x = float64(v)
	case float64:
		x = v
	default:
		f.add("%s must be a number of %g-%g", name, lo, hi)
		return 0, false
	}
	if math.IsNaN(x) || x < lo || x > hi {
		f.add("%s must be a number of %g-%g", name, lo, hi)
		return 0, false
	}
	return x, true
}

// list is member name's structures (or strings, as items): at most maxLen.
func (f fields) list(name string, maxLen int) []any {
	v, ok := f.m[name]
	if !ok {
		return nil
	}
	l, ok := v.([]any)
	if !ok || len(l) > maxLen {
		f.add("%s must be a list of at most %d", name, maxLen)
		return nil
	}
	return l
}

// each calls read with the fields of every structure of list name.
func (f fields) each(name string, maxLen int, read func(int, fields)) {
	for i, e := range f.list(name, maxLen) {
		m, ok := e.(map[string]any)
		sub := fields{m: m, prefix: fmt.Sprintf("%s%s[%d].", f.prefix, name, i), problems: f.problems}
		if !ok {
			f.add("%s[%d] must be a structure", name, i)
			continue
		}
		read(i, sub)
	}
}

// PlacementID reads DescribeGameSessionPlacementInput and
// StopGameSessionPlacementInput: {PlacementId}.
func PlacementID(m map[string]any) (string, error) {
	var problems []string
	id := fields{m: m, problems: &problems}.str("PlacementId", 1, maxPlacementID, true)
	if id != "" && !gameinstance.IsGameLiftName(id, maxPlacementID) {
		problems = append(problems, "PlacementId must match [a-zA-Z0-9-]+")
	}
	return id, invalidIf(problems)
}

// ReadStart reads StartGameSessionPlacementInput, every problem at once.
func ReadStart(m map[string]any) (StartInput, error) {
	var problems []string
	f := fields{m: m, problems: &problems}
	in := StartInput{PlacementID: f.str("PlacementId", 1, maxPlacementID, true), QueueName: f.str("GameSessionQueueName", 1, maxQueueNameOrArn, true)}
	if in.PlacementID != "" && !gameinstance.IsGameLiftName(in.PlacementID, maxPlacementID) {
		f.add("PlacementId must match [a-zA-Z0-9-]+")
	}
	if q := in.QueueName; q != "" && !validQueue(q) {
		f.add("GameSessionQueueName must be a queue name ([a-zA-Z0-9-]+) or its ARN (arn:...:gamesessionqueue/<name>)")
	}
	if n := f.integer("MaximumPlayerSessionCount", 0, math.MaxInt32, true); n != nil {
		count := int(*n)
		in.Session.MaximumPlayerSessionCount = &count
	}
	in.Session.Name = f.str("GameSessionName", 1, maxSessionName, false)
	in.Session.Data = f.str("GameSessionData", 1, maxSessionData, false)
	f.each("GameProperties", maxProperties, func(_ int, p fields) {
		in.Session.Properties = append(in.Session.Properties, gameinstance.GameProperty{Key: p.str("Key", 0, maxPropertyKey, true),
			Value: p.str("Value", 0, maxPropertyValue, true)})
	})
	f.each("DesiredPlayerSessions", maxDesiredSessions, func(_ int, p fields) {
		in.Session.DesiredPlayerSessions = append(in.Session.DesiredPlayerSessions,
			gameinstance.PlayerSession{PlayerID: p.str("PlayerId", 1, maxPlayerID, true), PlayerData: p.str("PlayerData", 1, maxPlayerData, false)})
	})
	f.each("PlayerLatencies", maxLatencyEntries, func(_ int, p fields) {
		l := gameinstance.RegionLatency{PlayerID: p.str("PlayerId", 1, maxPlayerID, true), Region: p.str("RegionIdentifier", 1, maxRegionID, true)}
		l.LatencyMs, _ = p.number("LatencyInMilliseconds", 0, maxLatencyMs)
		in.Latencies = append(in.Latencies, l)
	})
	readPriority(f, &in)
	checkStart(f, in)
	return in, invalidIf(problems)
}

// readPriority reads PriorityConfigurationOverride.
func readPriority(f fields, in *StartInput) {
	v, ok := f.m["PriorityConfigurationOverride"]
	if !ok {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		f.add("PriorityConfigurationOverride must be a structure")
		return
	}
	p := fields{m: m, prefix: "PriorityConfigurationOverride.", problems: f.problems}
	order := p.list("LocationOrder", maxLocationOrder)
	if _, ok := m["LocationOrder"]; !ok || order != nil && len(order) == 0 {
		p.add("LocationOrder must list 1-%d locations", maxLocationOrder)
	}
	for i, e := range order {
		s, ok := e.(string)
		if !ok || !gameinstance.IsGameLiftName(s, maxLocation) {
			p.add("LocationOrder[%d] must be 1-%d letters, digits and -", i, maxLocation)
			continue
		}
		in.LocationOrder = append(in.LocationOrder, s)
	}
	in.FallbackStrategy = p.str("PlacementFallbackStrategy", 1, 32, false)
	if s := in.FallbackStrategy; s != "" && s != fallbackDefault && s != fallbackNone {
		p.add("PlacementFallbackStrategy must be %s or %s", fallbackDefault, fallbackNone)
	}
}

// checkStart adds the rules between members.
func checkStart(f fields, in StartInput) {
	if len(in.LocationOrder) > 0 && len(in.Latencies) > 0 {
		f.add("PriorityConfigurationOverride cannot be used with PlayerLatencies")
	}
	if n := in.Session.MaximumPlayerSessionCount; n != nil && len(in.Session.DesiredPlayerSessions) > *n {
		f.add("DesiredPlayerSessions may list at most MaximumPlayerSessionCount (%d) players", *n)
	}
	seen := map[[2]string]bool{}
	for _, l := range in.Latencies {
		if k := [2]string{l.PlayerID, strings.ToLower(l.Region)}; seen[k] {
			f.add("PlayerLatencies lists a player twice for the region %q", l.Region)
			break
		} else {
			seen[k] = true
		}
	}
	if size := sessionSize(in.Session); size > maxSessionBytes {
		f.add("GameSessionName, GameSessionData, GameProperties and DesiredPlayerSessions together take %d bytes, more than the %d the game server's payload has room for",
			size, maxSessionBytes)
	}
}

// sessionSize is how many bytes the game session adds to the payload.
func sessionSize(s gameinstance.GameSession) int {
	b, _ := json.Marshal(s) // strings and ints: cannot fail
	return len(b)
}

// validQueue: q is a queue's name or ARN, as GameLift's pattern says.
func validQueue(q string) bool {
	if strings.HasPrefix(q, "arn:") {
		_, name, ok := strings.Cut(q, ":gamesessionqueue/")
		return ok && gameinstance.IsGameLiftName(name, maxQueueNameOrArn)
	}
	return gameinstance.IsGameLiftName(q, maxQueueNameOrArn)
}
