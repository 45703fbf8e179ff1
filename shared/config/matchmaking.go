package config

import (
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
	// TicketsTimeout bounds reading a match's tickets (not read from the
	// environment: defaults.DescribeMatchmakingTimeout).
	TicketsTimeout time.Duration
}

// LoadMatchmaking reads MatchmakingFunction's configuration.
func LoadMatchmaking(getenv func(string) string) (Matchmaking, error) {
	base, err := LoadAllocate(getenv)
	r := reader{getenv: getenv}
	if err != nil {
		r.problem("%s", err.Error())
	}
	c := Matchmaking{Allocate: base, MatchesTable: r.required("MATCHES_TABLE"),
		MatchQueueTimeout: r.nonNegativeDuration("FLEXMATCH_QUEUE_TIMEOUT", defaults.FlexMatchQueueTimeout),
		TicketsTimeout:    defaults.DescribeMatchmakingTimeout}
	// Read here, not from base: base is empty when it has problems of its own.
	r.queueTimeout("FLEXMATCH_QUEUE_TIMEOUT", c.MatchQueueTimeout, r.optional("PLACEMENT_QUEUE_URL"), "a waiting match")
	if err := r.err(); err != nil {
		return Matchmaking{}, err
	}
	return c, nil
}

// validEventName reports whether s is what EventBridge takes as a
// detail-type, the template's MatchmakingEventName pattern
// ^[A-Za-z][A-Za-z0-9._-]{0,127}$. A loop, not a regexp: that pattern's
// {0,127} compiles into 127 copies of its class, about 0.4 ms at every
// cold start of every function (they all link this package).
func validEventName(s string) bool {
	if s == "" || len(s) > 128 || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
