package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// WithRooms is s writing room changes to servers' records (PutRoom,
// ChangeRoom); without it the instances hold no rooms.
func (s *GameInstances) WithRooms(servers *GameServers) *GameInstances {
	c := *s
	c.servers = servers
	return &c
}

// errNoRooms: a room change without a game servers table.
var errNoRooms = errors.New("no game servers table is configured (GAME_SERVERS_TABLE)")

// roomVariants bounds how often a join alternates between its two forms
// when the session's room comes and goes under it.
const roomVariants = 3

// PutRoom writes rec as Put does (conditioned on the version it was read
// at) and, in the same transaction, change to its game server's record:
//   - RoomJoin: the offer, and the session's room (or only the offer when
//     it holds one already);
//   - RoomClose: the server stops accepting; gameinstance.ErrRoomNotHeld
//     when the session holds no room there, and nothing is written;
//   - RoomRelease: the room comes back (and the server closes, with
//     change.Close); a room not held any more is not released twice, and
//     rec is written alone.
//
// It returns the stored record, or gameinstance.ErrVersionConflict.
func (s *GameInstances) PutRoom(ctx context.Context, rec gameinstance.Record, change gameinstance.RoomChange) (gameinstance.Record, error) {
	if s.servers == nil {
		return gameinstance.Record{}, errNoRooms
	}
	inst, err := s.putInput(rec)
	if err != nil {
		return gameinstance.Record{}, err
	}
	stored := rec
	stored.Version = rec.Version + 1
	joined := false // the join found the session holding its room: offer only
	for variant := 0; variant < roomVariants; variant++ {
		srv, cond := s.servers.roomWrite(change, joined)
		in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: inst.TableName, Key: inst.Key, UpdateExpression: inst.UpdateExpression,
				ConditionExpression: inst.ConditionExpression, ExpressionAttributeNames: inst.ExpressionAttributeNames,
				ExpressionAttributeValues: inst.ExpressionAttributeValues, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
			{Update: s.servers.txnUpdate(s.servers.table, serverKey(change.Address), srv, cond)},
		}}
		var refusedBy map[string]types.AttributeValue // the server's record, when its condition failed
		err := s.servers.transact(ctx, in, func(reasons []types.CancellationReason) error {
			switch {
			case failedCondition(reasons[0]):
				if written(rec, reasons[0].Item, rec.Version+1) {
					return nil // our own write, saved with its reply lost
				}
				return fmt.Errorf("put %s: %w", rec.GameInstanceID, gameinstance.ErrVersionConflict)
			case failedCondition(reasons[1]):
				refusedBy = reasons[1].Item
				if refusedBy == nil {
					refusedBy = map[string]types.AttributeValue{}
				}
				return nil
			}
			return errRetryTransaction
		}, func() error { return s.confirmPut(ctx, rec) })
		if err != nil {
			return gameinstance.Record{}, err
		}
		if refusedBy == nil {
			return stored, nil
		}
		next, err := refused(change, joined, refusedBy)
		if errors.Is(err, errNotHeld) {
			// Given back already (or the record is another server's life):
			// nothing to release, and the instance moves on all the same.
			return s.Put(ctx, rec)
		}
		if err != nil {
			return gameinstance.Record{}, err
		}
		joined = next
	}
	return gameinstance.Record{}, fmt.Errorf("join game server %s: the session's room kept changing", change.Address)
}

// errNotHeld: a release found the session holding no room on the server.
var errNotHeld = errors.New("the session holds no room there")

// refused decides a room change whose condition the server's record
// (item, as it was) refused: a release of a room not held (errNotHeld),
// a close by a session without a room (gameinstance.ErrRoomNotHeld), an
// offer below the rooms in use (*gameinstance.CapacityError), or a join
// to retry in its other form (the session held its room already, or no
// longer did): next says which.
func refused(change gameinstance.RoomChange, joined bool, item map[string]types.AttributeValue) (next bool, err error) {
	switch change.Op {
	case gameinstance.RoomRelease:
		return false, errNotHeld
	case gameinstance.RoomClose:
		return false, fmt.Errorf("close game server %s: %w", change.Address, gameinstance.ErrRoomNotHeld)
	}
	holds := held(item, change.SessionID)
	var inUse int
	if n, ok := item["roomsInUse"].(*types.AttributeValueMemberN); ok {
		inUse, _ = strconv.Atoi(n.Value)
	}
	if holds != joined {
		return holds, nil
	}
	// The form fitted: its capacity condition failed. A join would have
	// added the session's own room.
	if !holds {
		inUse++
	}
	return joined, &gameinstance.CapacityError{Capacity: change.Offer.Capacity, InUse: inUse}
}

// ChangeRoom applies change to the game server's record alone: a linked
// instance's new offer or capacity 0, with nothing to change in its own
// record. The errors are PutRoom's.
func (s *GameInstances) ChangeRoom(ctx context.Context, change gameinstance.RoomChange) error {
	if s.servers == nil {
		return errNoRooms
	}
	joined := false
	for variant := 0; variant < roomVariants; variant++ {
		e, cond := s.servers.roomWrite(change, joined)
		_, err := s.servers.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.servers.table), Key: serverKey(change.Address),
			UpdateExpression: aws.String(e.update()), ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			return nil
		case !errors.As(err, &ccf):
			return fmt.Errorf("change game server %s: %w", change.Address, err)
		}
		// The SDK's retry of our own join after a lost reply lands here
		// too: the offer alone is then the same write.
		next, err := refused(change, joined, ccf.Item)
		switch {
		case errors.Is(err, errNotHeld):
			return nil
		case err != nil:
			return err
		}
		joined = next
	}
	return fmt.Errorf("join game server %s: the session's room kept changing", change.Address)
}

// confirmPut reads the instance back after a transaction whose reply never
// came: nil when rec is what is stored (the transaction is atomic, so its
// room change was applied too).
func (s *GameInstances) confirmPut(ctx context.Context, rec gameinstance.Record) error {
	ctx, cancel := confirmContext(ctx)
	defer cancel()
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(rec.GameInstanceID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("put %s: the outcome is unknown and reading it back failed: %w", rec.GameInstanceID, err)
	}
	if written(rec, out.Item, rec.Version+1) {
		return nil
	}
	return fmt.Errorf("put %s with its game server's room: not applied", rec.GameInstanceID)
}

// roomWrite is the game server's half of change: its update and the
// condition it needs. joined selects a join's second form, the offer
// alone, for a session that holds its room already.
func (s *GameServers) roomWrite(change gameinstance.RoomChange, joined bool) (*expr, string) {
	e := newExpr()
	now := s.now()
	e.touch(now, s.retention)
	id := change.SessionID
	switch {
	case change.Op == gameinstance.RoomRelease:
		e.release(id)
		if change.Close {
			e.close(change.Reason)
		}
		return e, e.holds(id)
	case change.Op == gameinstance.RoomClose:
		e.close(gameinstance.ClosedByServer)
		return e, e.holds(id)
	case joined:
		s.offer(e, change)
		capacity := e.num("cap", int64(change.Offer.Capacity))
		e.set = append(e.set, e.name("freeRooms")+" = "+capacity+" - "+e.name("roomsInUse"))
		// Never over capacity: an offer below the rooms in use is refused.
		return e, e.holds(id) + " AND " + e.name("roomsInUse") + " <= " + capacity
	}
	// A join: the server's identity as the instance's allocation recorded
	// it (a server GameFabric allocated again, having registered anew, is
	// the allocation that brought it now), the offer, and the room.
	s.offer(e, change)
	zero, one := e.num("zero", 0), e.num("one", 1)
	inUse := "if_not_exists(" + e.name("roomsInUse") + ", " + zero + ")"
	e.set = append(e.set, e.name("region")+" = "+e.str("region", change.Pool.Region),
		e.name("environment")+" = "+e.str("env", change.Pool.Environment),
		e.name("armadaSet")+" = "+e.str("set", change.Pool.ArmadaSet),
		e.name("ip")+" = "+e.str("ip", change.Server.IP),
		e.name("ports")+" = "+e.value("ports", portsValue(change.Server.Ports)),
		e.name("createdAt")+" = if_not_exists("+e.name("createdAt")+", "+e.str("now", FormatTime(now))+")",
		e.name("roomsInUse")+" = "+inUse+" + "+one,
		e.name("freeRooms")+" = "+e.num("capLessOne", int64(change.Offer.Capacity-1))+" - "+inUse)
	e.add = append(e.add, e.name("sessions")+" "+e.sessionSet(id))
	return e, "attribute_not_exists(" + e.name(GameServerKey) + ") OR (NOT " + e.holds(id) + " AND " +
		e.name("roomsInUse") + " < " + e.num("cap", int64(change.Offer.Capacity)) + ")"
}

// offer sets what a link's offer says: the capacity, the callback, and
// that the server accepts (again), with a fresh run of callbacks.
func (s *GameServers) offer(e *expr, change gameinstance.RoomChange) {
	o := change.Offer
	e.set = append(e.set, e.name("roomCapacity")+" = "+e.num("cap", int64(o.Capacity)),
		e.name("accepting")+" = "+e.value("true", &types.AttributeValueMemberBOOL{Value: true}),
		e.name("roomPool")+" = "+e.str("pool", PoolKey(change.Pool)),
		e.name("callbackFailures")+" = "+e.num("zero", 0))
	e.remove = append(e.remove, e.name("closedReason"))
	if o.CallbackURL != "" {
		e.set = append(e.set, e.name("callbackUrl")+" = "+e.str("url", o.CallbackURL), e.name("callbackToken")+" = "+e.str("token", o.CallbackToken))
	} else {
		e.remove = append(e.remove, e.name("callbackUrl"), e.name("callbackToken"))
	}
}

// portsValue is a server's named ports as DynamoDB stores them.
func portsValue(ports map[string]int) types.AttributeValue {
	if ports == nil {
		ports = map[string]int{}
	}
	av, err := attributevalue.Marshal(ports)
	if err != nil {
		return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
	}
	return av
}
