package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
type Matches struct {
	db    MatchesDB
	table string
	// retention is how long an item is kept (expiresAt, the TTL).
	retention time.Duration
	now       func() time.Time
}

// NewMatches uses table through db; items expire after retention.
func NewMatches(db MatchesDB, table string, retention time.Duration) *Matches {
	return &Matches{db: db, table: table, retention: retention, now: time.Now}
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
	now := s.now()
	av, err := attributevalue.MarshalMap(matchItem{MatchID: m.ID, EventID: m.EventID, ConfigurationArn: m.ConfigurationArn,
		Detail: string(m.Detail), TicketIDs: m.TicketIDs, CreatedAt: now.Unix(), ExpiresAt: now.Add(s.retention).Unix()})
	if err != nil {
		return fmt.Errorf("encode match %s: %w", m.ID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av,
		ConditionExpression: aws.String("attribute_not_exists(matchId)")})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("keep match %s: %w", m.ID, err)
	}
	return nil
}

// Get returns the kept match, or gameinstance.ErrNotFound.
func (s *Matches) Get(ctx context.Context, matchID string) (gameinstance.Match, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{MatchKey: &types.AttributeValueMemberS{Value: matchID}}})
	if err != nil {
		return gameinstance.Match{}, fmt.Errorf("read match %s: %w", matchID, err)
	}
	if len(out.Item) == 0 {
		return gameinstance.Match{}, gameinstance.ErrNotFound
	}
	var it matchItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return gameinstance.Match{}, fmt.Errorf("decode match %s: %w", matchID, err)
	}
	m := gameinstance.Match{ID: it.MatchID, EventID: it.EventID, ConfigurationArn: it.ConfigurationArn, TicketIDs: it.TicketIDs}
	if it.Detail != "" {
		m.Detail = []byte(it.Detail)
	}
	return m, nil
}
