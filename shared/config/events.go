package config

import (
	"log/slog"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// Events is EventsFunction's configuration.
type Events struct {
	// Bus is EVENT_BUS_NAME: the EventBridge bus events are put on.
	Bus string
	// MatchesTable is where MatchmakingFunction keeps matches
	// (MATCHES_TABLE); "" = no FlexMatch matches to publish again.
	MatchesTable string
	// MatchmakingEventName is the detail-type (and detail.type) a placed
	// match's event is published again under (MATCHMAKING_EVENT_NAME).
	MatchmakingEventName string
	// PlacementsTable is where GameLiftApiFunction keeps placements
	// (GAME_SESSION_PLACEMENTS_TABLE); "" = no GameLift events.
	PlacementsTable string
	LogLevel        slog.Level
}

// LoadEvents reads EventsFunction's configuration.
func LoadEvents(getenv func(string) string) (Events, error) {
	r := reader{getenv: getenv}
	c := Events{Bus: r.required("EVENT_BUS_NAME"), MatchesTable: r.optional("MATCHES_TABLE"),
		MatchmakingEventName: r.optional("MATCHMAKING_EVENT_NAME"), PlacementsTable: r.optional("GAME_SESSION_PLACEMENTS_TABLE"),
		LogLevel: r.level("LOG_LEVEL")}
	if c.MatchmakingEventName == "" {
		c.MatchmakingEventName = defaults.MatchmakingEventName
	} else if !validEventName(c.MatchmakingEventName) {
		r.problem("MATCHMAKING_EVENT_NAME must be 1-128 letters, digits and . _ -, starting with a letter, got %q", c.MatchmakingEventName)
	}
	if err := r.err(); err != nil {
		return Events{}, err
	}
	return c, nil
}
