package config

import (
	"regexp"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// Matchmaking is MatchmakingFunction's configuration: the allocate
// settings (a match is placed exactly as an API call is), where matches
// are kept, and how long a match waits for capacity.
type Matchmaking struct {
	Allocate
	// MatchesTable keeps each match's event (MATCHES_TABLE).
	MatchesTable string
	// MatchQueueTimeout is FLEXMATCH_QUEUE_TIMEOUT (0 = fail at once); the
	// embedded QueueTimeout (QUEUE_TIMEOUT) is the API's.
	MatchQueueTimeout time.Duration
}

// LoadMatchmaking reads MatchmakingFunction's configuration.
func LoadMatchmaking(getenv func(string) string) (Matchmaking, error) {
	base, err := LoadAllocate(getenv)
	r := reader{getenv: getenv}
	if err != nil {
		r.problem("%s", err.Error())
	}
	c := Matchmaking{Allocate: base, MatchesTable: r.required("MATCHES_TABLE"),
		MatchQueueTimeout: r.nonNegativeDuration("FLEXMATCH_QUEUE_TIMEOUT", defaults.FlexMatchQueueTimeout)}
	// Read here, not from base: base is empty when it has problems of its own.
	r.queueTimeout("FLEXMATCH_QUEUE_TIMEOUT", c.MatchQueueTimeout, r.optional("PLACEMENT_QUEUE_URL"), "a waiting match")
	if err := r.err(); err != nil {
		return Matchmaking{}, err
	}
	return c, nil
}

// eventName is what EventBridge takes as a detail-type (and the template's
// MatchmakingEventName pattern).
var eventName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,127}$`)
