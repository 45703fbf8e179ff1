package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// DynamoDB is the part of the DynamoDB client the store uses.
type DynamoDB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

var _ DynamoDB = (*dynamodb.Client)(nil)

// GameInstances stores allocation records in one table keyed by gameInstanceId.
type GameInstances struct {
	db    DynamoDB
	table string
	// servers holds the rooms; nil when the deployment keeps none.
	servers *GameServers
}

// NewGameInstances uses table through db.
func NewGameInstances(db DynamoDB, table string) *GameInstances {
	return &GameInstances{db: db, table: table}
}

// Claim takes the game instance if it is new, Failed, or an Allocating claim
// whose lease expired before takeoverBefore. createdAt survives a retry or
// takeover. It returns the claim as stored: rec with the createdAt and
// version the write left (from what it replaced, if anything).
//
// Most claims are of a new game instance, so the first write is the
// cheapest DynamoDB has: a PutItem of the whole record, on the condition
// that there is none (no update expression to parse). Only when a record is
// there does an UpdateItem decide, one that keeps its createdAt and counts
// its version on: a retry of a Failed allocation or a takeover, which so
// pay one refused write more. A replay pays the refused put alone, as it
// paid the refused update.
func (s *GameInstances) Claim(ctx context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error) {
	stored, existing, err := s.claimNew(ctx, rec)
	switch {
	case err != nil:
		return gameinstance.Record{}, err
	case existing == nil && stored.GameInstanceID != "":
		return stored, nil
	case existing == nil:
		// Refused, yet gone when read (a record expiring): the update's
		// condition decides.
	case existing.ClaimedBy(rec.ClaimID):
		return *existing, nil // our own put, saved with its reply lost
	case !claimable(*existing, takeoverBefore):
		return gameinstance.Record{}, &gameinstance.ClaimConflictError{Existing: *existing}
	}
	// A claim in doubt that may hold a room is not taken over: the health
	// sweep fails it first, giving the room back in the same transaction.
	// A match's Failed record is final: its players were told (AllocationFailed),
	// so a late copy of its event must not place it after all. So is a
	// GameLift placement's: GameLift never reuses a PlacementId. The
	// condition decides; claimable only saves a write that would be refused.
	return s.claim(ctx, rec, "attribute_not_exists(gameInstanceId) OR "+
		"(#c_state = :c_failed AND attribute_not_exists(fromMatch) AND attribute_not_exists(gameLift)) OR "+
		"(#c_state = :c_allocating AND leaseExpiresAt < :c_takeover AND attribute_not_exists(roomServer))",
		map[string]types.AttributeValue{
			":c_failed":     &types.AttributeValueMemberS{Value: string(gameinstance.StateFailed)},
			":c_allocating": &types.AttributeValueMemberS{Value: string(gameinstance.StateAllocating)},
			":c_takeover":   &types.AttributeValueMemberN{Value: formatInt(takeoverBefore.UnixMilli())},
		})
}

// claimable is Claim's condition on a record found: Failed (a match's and a
// GameLift placement's are final), or an Allocating claim whose lease ran out before takeoverBefore
// and that holds no room.
func claimable(rec gameinstance.Record, takeoverBefore time.Time) bool {
	switch rec.State {
	case gameinstance.StateFailed:
		return !rec.Fingerprint.Match && rec.Fingerprint.GameLift == ""
	case gameinstance.StateAllocating:
		return rec.LeaseExpiresAt.Before(takeoverBefore) && rec.RoomServer == ""
	}
	return false
}

// claimNew puts rec, at version 1, if the game instance has no record
// (stored is then rec as stored); existing is the record there when it has
// one. Both are empty when the put was refused and the record then gone.
func (s *GameInstances) claimNew(ctx context.Context, rec gameinstance.Record) (stored gameinstance.Record, existing *gameinstance.Record, err error) {
	rec.Version = 1
	item, err := Encode(rec)
	if err != nil {
		return gameinstance.Record{}, nil, fmt.Errorf("encode %s: %w", rec.GameInstanceID, err)
	}
	if size := ItemSize(item); size > MaxItemBytes-itemSizeMargin {
		return gameinstance.Record{}, nil, fmt.Errorf("write %s (%d bytes): %w", rec.GameInstanceID, size, gameinstance.ErrTooLarge)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(gameInstanceId)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		if err != nil {
			return gameinstance.Record{}, nil, fmt.Errorf("claim %s: %w", rec.GameInstanceID, err)
		}
		return toItem(rec).record(), nil, nil
	}
	found, err := s.conflicting(ctx, rec.GameInstanceID, ccf)
	if errors.Is(err, gameinstance.ErrNotFound) {
		return gameinstance.Record{}, nil, nil
	}
	if err != nil {
		return gameinstance.Record{}, nil, fmt.Errorf("claim %s: %w", rec.GameInstanceID, err)
	}
	return gameinstance.Record{}, &found, nil
}

// Resume takes a queued placement for the queue worker's next attempt: rec
// (an Allocating claim) is written only while the instance is Queued under
// ticket, so of the copies of a queue message only one runs, and none once
// a DELETE cancelled the placement.
func (s *GameInstances) Resume(ctx context.Context, rec gameinstance.Record, ticket string) error {
	_, err := s.claim(ctx, rec, "#c_state = :c_queued AND queueTicket = :c_ticket", map[string]types.AttributeValue{
		":c_queued": &types.AttributeValueMemberS{Value: string(gameinstance.StateQueued)},
		":c_ticket": &types.AttributeValueMemberS{Value: ticket},
	})
	return err
}

// claim writes rec under condition (whose #c_state is the state); a refusal
// is *ClaimConflictError with the record that refused it, unless that
// record is rec's own claim, saved with its reply lost. It returns the
// claim as stored: the write's UPDATED_OLD image (nothing for a new item)
// holds the createdAt it kept and the version it counted from.
func (s *GameInstances) claim(ctx context.Context, rec gameinstance.Record, condition string, values map[string]types.AttributeValue) (gameinstance.Record, error) {
	in, err := s.update(rec, "createdAt")
	if err != nil {
		return gameinstance.Record{}, err
	}
	in.ConditionExpression = aws.String(condition)
	in.ExpressionAttributeNames["#c_state"] = "state"
	for k, v := range values {
		in.ExpressionAttributeValues[k] = v
	}
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	in.ReturnValues = types.ReturnValueUpdatedOld

	out, err := s.db.UpdateItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		if err != nil {
			return gameinstance.Record{}, fmt.Errorf("claim %s: %w", rec.GameInstanceID, err)
		}
		return claimed(rec, out.Attributes), nil
	}
	existing, err := s.conflicting(ctx, rec.GameInstanceID, ccf)
	if err != nil {
		return gameinstance.Record{}, fmt.Errorf("claim %s: %w", rec.GameInstanceID, err)
	}
	if existing.ClaimedBy(rec.ClaimID) {
		// Our own claim: the write was saved, its reply lost, and the SDK's
		// retry failed the condition against it.
		return existing, nil
	}
	return gameinstance.Record{}, &gameinstance.ClaimConflictError{Existing: existing}
}

// claimed is the claim rec as its write stored it, from the write's
// UPDATED_OLD image: the createdAt it kept, the version after the one it
// replaced.
func claimed(rec gameinstance.Record, old map[string]types.AttributeValue) gameinstance.Record {
	rec.Version = 1
	if v, ok := old["version"].(*types.AttributeValueMemberN); ok {
		if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
			rec.Version = n + 1
		}
	}
	if c, ok := old["createdAt"].(*types.AttributeValueMemberS); ok && c.Value != "" {
		rec.CreatedAt = ParseTime(c.Value)
	}
	return rec
}

// conflicting is the record a failed condition met: the ALL_OLD image, or a
// read when a backend omits it. ErrNotFound when there is none.
func (s *GameInstances) conflicting(ctx context.Context, id string, ccf *types.ConditionalCheckFailedException) (gameinstance.Record, error) {
	if ccf.Item != nil {
		return decode(ccf.Item)
	}
	rec, err := s.Get(ctx, id)
	if err != nil && !errors.Is(err, gameinstance.ErrNotFound) {
		return gameinstance.Record{}, fmt.Errorf("read the conflicting record: %w", err)
	}
	return rec, err
}

// Put writes rec if the stored version is still rec.Version (the version it
// was read at), and returns the stored record; ErrVersionConflict otherwise.
func (s *GameInstances) Put(ctx context.Context, rec gameinstance.Record) (gameinstance.Record, error) {
	in, err := s.putInput(rec)
	if err != nil {
		return gameinstance.Record{}, err
	}
	in.ReturnValues = types.ReturnValueAllNew
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := s.db.UpdateItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if written(rec, ccf.Item, rec.Version+1) {
			// Exactly what we wrote is stored: our write was saved, its
			// reply lost, and the SDK's retry failed the version condition.
			return decode(ccf.Item)
		}
		return gameinstance.Record{}, fmt.Errorf("put %s: %w", rec.GameInstanceID, gameinstance.ErrVersionConflict)
	}
	if err != nil {
		return gameinstance.Record{}, fmt.Errorf("put %s: %w", rec.GameInstanceID, err)
	}
	return decode(out.Attributes)
}

// putInput is the write of rec conditioned on the version it was read at.
func (s *GameInstances) putInput(rec gameinstance.Record) (*dynamodb.UpdateItemInput, error) {
	in, err := s.update(rec, "createdAt")
	if err != nil {
		return nil, err
	}
	in.ConditionExpression = aws.String("#v = :c_seen")
	in.ExpressionAttributeValues[":c_seen"] = &types.AttributeValueMemberN{Value: formatInt(rec.Version)}
	if rec.Version == 0 {
		// Written before records carried versions.
		in.ConditionExpression = aws.String("attribute_exists(gameInstanceId) AND attribute_not_exists(#v)")
		delete(in.ExpressionAttributeValues, ":c_seen")
	}
	return in, nil
}

// itemSizeMargin leaves room for what a write adds to its attributes
// (the version) and for attributes older records carry that it keeps.
const itemSizeMargin = 4 << 10

// HealthIndex is the sparse GSI on (healthShard, healthDeadline).
const HealthIndex = "HealthDeadlineIndex"

// Get reads a record with a strongly consistent read: a replay or status
// check right after an allocation must see it. A Linked session holding a
// room has its server's last beat for all its sessions folded into its
// LastHeartbeatAt (one more strongly consistent read, of the server's
// record).
func (s *GameInstances) Get(ctx context.Context, gameInstanceID string) (gameinstance.Record, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            key(gameInstanceID),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return gameinstance.Record{}, fmt.Errorf("get %s: %w", gameInstanceID, err)
	}
	if out.Item == nil {
		return gameinstance.Record{}, gameinstance.ErrNotFound
	}
	rec, err := decode(out.Item)
	if err != nil {
		return rec, err
	}
	recs := []gameinstance.Record{rec}
	if err := s.foldServerBeats(ctx, recs, true); err != nil {
		return gameinstance.Record{}, fmt.Errorf("get %s: %w", gameInstanceID, err)
	}
	return recs[0], nil
}

// update builds an UpdateItem that sets every attribute of rec, clears the
// optional ones it lacks, and writes the keep attributes only where absent.
// Every attribute has its own placeholders (#name, :name), and the clauses
// follow attributeOrder, so the same record always makes the same
// expression, built with a few allocations (it runs twice per allocation).
func (s *GameInstances) update(rec gameinstance.Record, keep ...string) (*dynamodb.UpdateItemInput, error) {
	av, err := Encode(rec)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", rec.GameInstanceID, err)
	}
	// DynamoDB would reject the write with a ValidationException that says
	// nothing a caller can act on; the domain can, by writing less.
	if size := ItemSize(av); size > MaxItemBytes-itemSizeMargin {
		return nil, fmt.Errorf("write %s (%d bytes): %w", rec.GameInstanceID, size, gameinstance.ErrTooLarge)
	}
	// Every write bumps the version, whoever makes it.
	names := make(map[string]string, len(attributeOrder)+4)
	values := make(map[string]types.AttributeValue, len(av)+6)
	names["#v"] = "version"
	values[":v0"], values[":v1"] = &types.AttributeValueMemberN{Value: "0"}, &types.AttributeValueMemberN{Value: "1"}
	var set, remove strings.Builder
	set.Grow(32 * len(av))
	set.WriteString("SET #v = if_not_exists(#v, :v0) + :v1")
	written := 2 // the key and the version
	for _, a := range attributeClauses {
		switch value, ok := av[a.name]; {
		case ok:
			written++
			names[a.placeholder], values[a.value] = a.name, value
			if slices.Contains(keep, a.name) {
				set.WriteString(a.keep)
			} else {
				set.WriteString(a.set)
			}
		case a.optional:
			names[a.placeholder] = a.name
			if remove.Len() == 0 {
				remove.WriteString(" REMOVE " + a.placeholder)
			} else {
				remove.WriteString(", " + a.placeholder)
			}
		}
	}
	if written != len(av) {
		return nil, fmt.Errorf("encode %s: %d attributes, %d of them in attributeOrder", rec.GameInstanceID, len(av), written)
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(rec.GameInstanceID),
		UpdateExpression:          aws.String(set.String() + remove.String()),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, nil
}

// attributeClause is an attribute's part of an update, spelt once: its
// placeholders and its SET clauses, plain and if absent.
type attributeClause struct {
	name, placeholder, value, set, keep string
	optional                            bool
}

// attributeClauses are attributeOrder's clauses; built once, never changed.
var attributeClauses = func() []attributeClause {
	out := make([]attributeClause, len(attributeOrder))
	for i, name := range attributeOrder {
		n, v := "#"+name, ":"+name
		out[i] = attributeClause{name: name, placeholder: n, value: v, set: ", " + n + " = " + v,
			keep: ", " + n + " = if_not_exists(" + n + ", " + v + ")", optional: slices.Contains(optional, name)}
	}
	return out
}()

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

func key(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: id}}
}

func decode(av map[string]types.AttributeValue) (gameinstance.Record, error) {
	var it item
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return gameinstance.Record{}, fmt.Errorf("decode record: %w", err)
	}
	return it.record(), nil
}
