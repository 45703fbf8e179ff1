package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// MatchKey is MatchesTable's key attribute.
const MatchKey = "matchId"

// MatchesDB is the part of the DynamoDB client Matches uses: a match is
// written once, whole, and read.
type MatchesDB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ MatchesDB = (*dynamodb.Client)(nil)

// Matches keeps what the service needs of FlexMatch matches' events, one
// item per matchId (MatchesTable).
type Matches struct{ kept }

// NewMatches uses table through db; items expire after retention.
func NewMatches(db MatchesDB, table string, retention time.Duration) *Matches {
	return &Matches{kept{db: db, table: table, key: MatchKey, what: "match", retention: retention, now: time.Now}}
}

type matchItem struct {
	MatchID          string   `dynamodbav:"matchId"`
	EventID          string   `dynamodbav:"eventId,omitempty"`
	ConfigurationArn string   `dynamodbav:"configurationArn,omitempty"`
	Detail           string   `dynamodbav:"detail,omitempty"`
	TicketIDs        []string `dynamodbav:"ticketIds,omitempty"`
	CreatedAt        int64    `dynamodbav:"createdAt"`
	ExpiresAt        int64    `dynamodbav:"expiresAt"`
}

// Keep writes m unless its match is kept already: the first copy of an
// event is the one kept, and a copy's write (or a retry of one whose reply
// was lost) is a no-op.
func (s *Matches) Keep(ctx context.Context, m gameinstance.Match) error {
	created, expires := s.expiry()
	_, err := s.put(ctx, m.ID, matchItem{MatchID: m.ID, EventID: m.EventID, ConfigurationArn: m.ConfigurationArn,
		Detail: string(m.Detail), TicketIDs: m.TicketIDs, CreatedAt: created, ExpiresAt: expires}, "attribute_not_exists(matchId)", nil)
	return err
}

// Get returns the kept match, or gameinstance.ErrNotFound.
func (s *Matches) Get(ctx context.Context, matchID string) (gameinstance.Match, error) {
	var it matchItem
	if err := s.get(ctx, matchID, &it); err != nil {
		return gameinstance.Match{}, err
	}
	m := gameinstance.Match{ID: it.MatchID, EventID: it.EventID, ConfigurationArn: it.ConfigurationArn, TicketIDs: it.TicketIDs}
	if it.Detail != "" {
		m.Detail = []byte(it.Detail)
	}
	return m, nil
}
