package stack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gamefabric-alloc/allocsvc/local/gamelift"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/internal/uuid"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// What GameLift's FlexMatch puts on the default bus for a match.
const (
	MatchSource     = "aws.gamelift"
	MatchDetailType = "GameLift Matchmaking Event"
	MatchSucceeded  = "MatchmakingSucceeded"
	// DefaultPlayers is a match's size when MatchOptions leaves it out.
	DefaultPlayers = 4
	// DefaultConfiguration names the local matchmaking configuration.
	DefaultConfiguration = "local-standalone"
)

// MatchOptions describe a FlexMatch match to play (PutMatch).
type MatchOptions struct {
	// Players is how many players were matched, each on a ticket of their
	// own: 1 to gameinstance.MaxMatchPlayers; 0 is DefaultPlayers.
	Players int `json:"players"`
	// Near is the region the players report the lowest latency to (as a
	// game client reports its pings to FlexMatch); "" is the first region.
	Near string `json:"near"`
	// NoLatencies leaves the players' LatencyInMs out: the match's region
	// then comes from customEventData.
	NoLatencies bool `json:"noLatencies"`
	// CustomEventData is the matchmaking configuration's CustomEventData;
	// nil is {"region":"<Near>"}, "" is none.
	CustomEventData *string `json:"customEventData"`
	Configuration   string  `json:"configuration"` // "" is DefaultConfiguration
	MatchID         string  `json:"matchId"`       // "" is a new UUID, as FlexMatch's are
}

// Match is a built MatchmakingSucceeded event: the entry to put on the
// default bus and the tickets DescribeMatchmaking answers for it.
type Match struct {
	MatchID string
	Entry   ebtypes.PutEventsRequestEntry
	Tickets []gamelift.Ticket
}

// The detail of a standalone FlexMatch MatchmakingSucceeded event, in the
// order of GameFabric's capture (event-standalone.json): gameSessionInfo
// holds only the players, customEventData is a string.
type matchDetail struct {
	Tickets         []matchTicket `json:"tickets"`
	CustomEventData string        `json:"customEventData,omitempty"`
	Type            string        `json:"type"`
	GameSessionInfo struct {
		Players []matchPlayer `json:"players"`
	} `json:"gameSessionInfo"`
	MatchID string `json:"matchId"`
}

type matchTicket struct {
	TicketID  string        `json:"ticketId"`
	StartTime string        `json:"startTime"`
	Players   []matchPlayer `json:"players"`
}

type matchPlayer struct {
	PlayerID string `json:"playerId"`
	Team     string `json:"team"`
}

// BuildMatch makes the MatchmakingSucceeded event of a match found at now,
// among players who report their latencies to regions (the first is the
// default Near).
func BuildMatch(o MatchOptions, regions []string, now time.Time) (Match, error) {
	o.Players = cmp.Or(o.Players, DefaultPlayers)
	o.Configuration = cmp.Or(o.Configuration, DefaultConfiguration)
	o.MatchID = cmp.Or(o.MatchID, uuid.New())
	if o.Players < 1 || o.Players > gameinstance.MaxMatchPlayers {
		return Match{}, fmt.Errorf("a match has 1 to %d players, not %d", gameinstance.MaxMatchPlayers, o.Players)
	}
	if o.Near == "" && len(regions) > 0 {
		o.Near = regions[0]
	}
	if o.Near != "" && !slices.Contains(regions, o.Near) {
		regions = append(slices.Clone(regions), o.Near)
	}
	if o.CustomEventData == nil {
		custom, _ := json.Marshal(map[string]string{"region": o.Near})
		o.CustomEventData = aws.String(string(custom))
	}
	arn := "arn:aws:gamelift:" + harness.Region + ":" + motoAccount + ":matchmakingconfiguration/" + o.Configuration
	m := Match{MatchID: o.MatchID}
	d := matchDetail{CustomEventData: *o.CustomEventData, Type: MatchSucceeded, MatchID: o.MatchID}
	for i := range o.Players {
		p := matchPlayer{PlayerID: fmt.Sprintf("player-%d", i+1), Team: []string{"red", "blue"}[i%2]}
		start := now.Add(-time.Duration(o.Players-i) * 1500 * time.Millisecond).UTC()
		tk := matchTicket{TicketID: uuid.New(), StartTime: start.Format("2006-01-02T15:04:05.000Z"), Players: []matchPlayer{p}}
		d.Tickets = append(d.Tickets, tk)
		d.GameSessionInfo.Players = append(d.GameSessionInfo.Players, p)
		player := gamelift.Player{PlayerID: p.PlayerID, Team: p.Team}
		if !o.NoLatencies {
			player.LatencyInMs = latencies(i, o.Near, regions)
		}
		m.Tickets = append(m.Tickets, gamelift.Ticket{TicketID: tk.TicketID, ConfigurationName: o.Configuration, ConfigurationArn: arn,
			Status: "COMPLETED", StartTime: start, Players: []gamelift.Player{player}})
	}
	detail, err := json.Marshal(d)
	if err != nil {
		return Match{}, err
	}
	m.Entry = ebtypes.PutEventsRequestEntry{Source: aws.String(MatchSource), DetailType: aws.String(MatchDetailType),
		Detail: aws.String(string(detail)), Resources: []string{arn}, Time: aws.Time(now), EventBusName: aws.String(defaultBus)}
	return m, nil
}

// latencies are player i's pings, as its game client reports them to
// FlexMatch: custom regions carry the custom- prefix. The near region is
// 25-54 ms away, the others 95 ms and more.
func latencies(i int, near string, regions []string) map[string]int {
	out := map[string]int{}
	for k, r := range regions {
		ms := 95 + (i*13)%70 + 10*k
		if r == near {
			ms = 25 + (i*7)%30
		}
		out["custom-"+r] = ms
	}
	return out
}

// MatchRegions are the regions players report latencies to: those the
// emulated Allocators serve, in their order.
func (c *Components) MatchRegions() []string {
	var out []string
	for _, a := range c.Allocators {
		out = append(out, slices.Sorted(maps.Keys(a.Regions))...)
	}
	return out
}

// PutMatch plays FlexMatch finding a match: it puts the match's tickets in
// the GameLift stand-in (DescribeMatchmaking answers with them) and its
// MatchmakingSucceeded event on moto's default bus (MatchmakingRule's). It
// returns the match's id, its game instance's id.
func (c *Components) PutMatch(ctx context.Context, o MatchOptions) (matchID string, err error) {
	if c.GameLift == nil {
		return "", errors.New("no GameLift stand-in")
	}
	m, err := BuildMatch(o, c.MatchRegions(), time.Now())
	if err != nil {
		return "", err
	}
	c.GameLift.Put(m.Tickets...)
	out, err := c.EventBridge().PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{m.Entry}})
	if err == nil && out.FailedEntryCount > 0 {
		err = fmt.Errorf("%s: %s", aws.ToString(out.Entries[0].ErrorCode), aws.ToString(out.Entries[0].ErrorMessage))
	}
	if err != nil {
		return "", fmt.Errorf("put the match's event on the default bus: %w", err)
	}
	return m.MatchID, nil
}
