package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// TransactDB is the part of the DynamoDB client the room writes use: a
// room moves together with its instance's record, in one transaction.
type TransactDB interface {
	DynamoDB
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ TransactDB = (*dynamodb.Client)(nil)

// GameServers keeps the records of game servers that offered rooms
// (GameServersTable) and takes, gives back and counts their rooms, each
// take and release in the same transaction as the instance's record in
// GameInstancesTable when one must not happen without the other.
type GameServers struct {
	db        TransactDB
	table     string
	instances string // GameInstancesTable
	retention time.Duration
	now       func() time.Time
}

// NewGameServers uses table for the game servers and instancesTable for
// the instance half of a take. A record nobody writes for retention
// expires (DynamoDB TTL).
func NewGameServers(db TransactDB, table, instancesTable string, retention time.Duration) *GameServers {
	return &GameServers{db: db, table: table, instances: instancesTable, retention: retention, now: time.Now}
}

// Candidates lists up to limit servers of pool with a free room, through
// FreeRoomsIndex: fewest free rooms first for Packed, most first for
// Distributed. It continues after cursor ("" = from the start) and returns
// the cursor to continue from, "" when there are no more. The index is
// eventually consistent: the take's condition is what decides.
func (s *GameServers) Candidates(ctx context.Context, pool gameinstance.RoomPool, order gameinstance.Scheduling, limit int, cursor string) ([]gameinstance.GameServer, string, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(FreeRoomsIndex),
		KeyConditionExpression:    aws.String("roomPool = :pool AND freeRooms >= :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pool": &types.AttributeValueMemberS{Value: PoolKey(pool)}, ":one": &types.AttributeValueMemberN{Value: "1"}},
		ScanIndexForward:          aws.Bool(order != gameinstance.SchedulingDistributed),
		Limit:                     aws.Int32(int32(limit)),
	}
	if cursor != "" {
		free, addr, ok := strings.Cut(cursor, "/")
		if _, err := strconv.Atoi(free); !ok || err != nil || addr == "" {
			return nil, "", fmt.Errorf("malformed free rooms cursor %q", cursor)
		}
		in.ExclusiveStartKey = map[string]types.AttributeValue{"roomPool": &types.AttributeValueMemberS{Value: PoolKey(pool)},
			"freeRooms": &types.AttributeValueMemberN{Value: free}, GameServerKey: &types.AttributeValueMemberS{Value: addr}}
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("query %s: %w", FreeRoomsIndex, err)
	}
	servers := make([]gameinstance.GameServer, 0, len(out.Items))
	for _, item := range out.Items {
		gs, err := DecodeGameServer(item)
		if err != nil {
			return nil, "", err
		}
		gs.Region, gs.Environment, gs.ArmadaSet, gs.Accepting = pool.Region, pool.Environment, pool.ArmadaSet, true
		servers = append(servers, gs)
	}
	next := ""
	if k := out.LastEvaluatedKey; len(k) > 0 {
		free, _ := k["freeRooms"].(*types.AttributeValueMemberN)
		addr, _ := k[GameServerKey].(*types.AttributeValueMemberS)
		if free == nil || addr == nil {
			return nil, "", errors.New("free rooms page ended on a key without freeRooms and address")
		}
		next = free.Value + "/" + addr.Value
	}
	return servers, next, nil
}

// Take holds a room on gs for the claim, in one transaction: the server's
// counts and sessions (if it is in pool, accepting, not full, and does not
// hold the instance already) and the claim's roomServer (if the claim is
// still claimID's and Allocating). gameinstance.ErrNoRoom: the server has
// no room for it now; gameinstance.ErrClaimLost: the claim is not
// claimID's; gameinstance.ErrRoomInDoubt: nobody can say whether it was
// taken; any other error: it was not taken.
func (s *GameServers) Take(ctx context.Context, id, claimID string, gs gameinstance.GameServer) error {
	inst := newExpr()
	inst.set = append(inst.set, inst.name("roomServer")+" = "+inst.str("addr", gs.Address),
		inst.name("version")+" = "+inst.name("version")+" + "+inst.num("one", 1))
	instCond := inst.name("claimId") + " = " + inst.str("claim", claimID) + " AND " +
		inst.name("state") + " = " + inst.str("allocating", string(gameinstance.StateAllocating))

	srv := newExpr()
	one := srv.num("one", 1)
	srv.set = append(srv.set, srv.name("roomsInUse")+" = "+srv.name("roomsInUse")+" + "+one,
		srv.name("freeRooms")+" = "+srv.name("freeRooms")+" - "+one)
	srv.add = append(srv.add, srv.name("sessions")+" "+srv.sessionSet(id))
	srv.touch(s.now(), s.retention)
	srvCond := srv.name("roomPool") + " = " + srv.str("pool", PoolKey(gameinstance.RoomPool{Region: gs.Region, Environment: gs.Environment, ArmadaSet: gs.ArmadaSet})) +
		" AND " + srv.name("roomsInUse") + " < " + srv.name("roomCapacity") + " AND NOT " + srv.holds(id)

	in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: s.txnUpdate(s.instances, key(id), inst, instCond)},
		{Update: s.txnUpdate(s.table, serverKey(gs.Address), srv, srvCond)},
	}}
	return s.transact(ctx, in, func(reasons []types.CancellationReason) error {
		switch {
		case failedCondition(reasons[1]):
			if held(reasons[1].Item, id) {
				// Our own take, saved with its reply lost and retried.
				return s.confirmTaken(ctx, id, gs.Address)
			}
			return gameinstance.ErrNoRoom
		case failedCondition(reasons[0]):
			return fmt.Errorf("take a room on %s for %s: %w", gs.Address, id, gameinstance.ErrClaimLost)
		}
		return errRetryTransaction
	}, func() error { return s.confirmTaken(ctx, id, gs.Address) }, outcomeWrite)
}

// confirmTaken reads the server back after a take whose reply never came:
// nil when the session holds a room there (the transaction is atomic, so
// the claim names the server too), an error when it does not, and
// gameinstance.ErrRoomInDoubt when the read fails.
func (s *GameServers) confirmTaken(ctx context.Context, id, address string) error {
	ctx, cancel := confirmContext(ctx)
	defer cancel()
	gs, err := s.Get(ctx, address)
	switch {
	case err == nil && slices.Contains(gs.Sessions, id):
		return nil
	case err == nil || errors.Is(err, gameinstance.ErrNotFound):
		return fmt.Errorf("take a room on %s for %s: not taken", address, id)
	}
	return fmt.Errorf("take a room on %s for %s (read back: %v): %w", address, id, err, gameinstance.ErrRoomInDoubt)
}

// GiveBack releases the session's room on the server at address after its
// callback failed, counting the failure; a server whose callbacks failed
// gameinstance.RoomCallbackFailureLimit times in a row stops accepting
// (closed reports that this call closed it). A room already given back is
// not given back twice. gameinstance.ErrRoomInDoubt: the room may still be
// held.
func (s *GameServers) GiveBack(ctx context.Context, id, address string) (closed bool, err error) {
	e := newExpr()
	e.release(id)
	e.set = append(e.set, e.name("callbackFailures")+" = if_not_exists("+e.name("callbackFailures")+", "+e.num("zero", 0)+") + "+e.num("one", 1))
	e.touch(s.now(), s.retention)
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: serverKey(address),
		UpdateExpression: aws.String(e.update()), ConditionExpression: aws.String(e.holds(id)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values, ReturnValues: types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}, outcomeWrite)
	var ccf *types.ConditionalCheckFailedException
	var after map[string]types.AttributeValue
	switch {
	case errors.As(err, &ccf):
		// Given back already: our own write, its reply lost and the SDK's
		// retry refused. What it left is the record now.
		after = ccf.Item
	case err != nil:
		cctx, cancel := confirmContext(ctx)
		defer cancel()
		gs, gerr := s.Get(cctx, address)
		if errors.Is(gerr, gameinstance.ErrNotFound) || (gerr == nil && !slices.Contains(gs.Sessions, id)) {
			return false, nil
		}
		return false, fmt.Errorf("give back the room of %s on %s (%v): %w", id, address, err, gameinstance.ErrRoomInDoubt)
	default:
		after = out.Attributes
	}
	gs, err := DecodeGameServer(after)
	if err != nil || !gs.Accepting || gs.CallbackFailures < gameinstance.RoomCallbackFailureLimit {
		return false, nil
	}
	c := newExpr()
	c.close(gameinstance.ClosedCallbackFailures)
	c.touch(s.now(), s.retention)
	cond := c.name("callbackFailures") + " >= " + c.num("limit", gameinstance.RoomCallbackFailureLimit) + " AND " +
		c.name("accepting") + " = " + c.value("true", &types.AttributeValueMemberBOOL{Value: true})
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: serverKey(address),
		UpdateExpression: aws.String(c.update()), ConditionExpression: aws.String(cond), ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.values})
	if errors.As(err, &ccf) {
		return false, nil // a success or a new offer came in between
	}
	return err == nil, err
}

// CallbackSucceeded ends a run of failed callbacks: the next failure is
// the first again.
func (s *GameServers) CallbackSucceeded(ctx context.Context, address string) error {
	e := newExpr()
	e.set = append(e.set, e.name("callbackFailures")+" = "+e.num("zero", 0))
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: serverKey(address),
		UpdateExpression: aws.String(e.update()), ConditionExpression: aws.String(e.name("callbackFailures") + " > " + e.num("zero", 0)),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return err
}

// Get reads a game server's record (strongly consistent).
func (s *GameServers) Get(ctx context.Context, address string) (gameinstance.GameServer, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: serverKey(address), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return gameinstance.GameServer{}, fmt.Errorf("get game server %s: %w", address, err)
	}
	if out.Item == nil {
		return gameinstance.GameServer{}, gameinstance.ErrNotFound
	}
	return DecodeGameServer(out.Item)
}

// Scan reads up to limit game-server records (for the rooms gauge and the
// local dashboard); more reports that the table holds more.
func (s *GameServers) Scan(ctx context.Context, limit int) (servers []gameinstance.GameServer, more bool, err error) {
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), Limit: aws.Int32(int32(min(limit, 1000)))})
	for p.HasMorePages() && len(servers) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return servers, false, fmt.Errorf("scan %s: %w", s.table, err)
		}
		for _, item := range page.Items {
			if gs, err := DecodeGameServer(item); err == nil {
				servers = append(servers, gs)
			}
		}
	}
	return servers, p.HasMorePages(), nil
}

// confirmTimeout bounds the read that settles a room write whose reply
// never came. It runs after the write's own time is up, detached from it.
const confirmTimeout = time.Second

func confirmContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), confirmTimeout)
}

// Transaction retries: a transaction cancelled because another one was
// writing the same item, or for throttling, applied nothing and is tried
// again after a short jittered pause, as Agones retries a contended
// allocation (5 tries, 10 ms apart).
const (
	txnTries = 5
	txnPause = 10 * time.Millisecond
)

// errRetryTransaction: a cancellation that applied nothing and may pass
// when tried again (a conflicting transaction, throttling).
var errRetryTransaction = errors.New("retry the transaction")

// transact runs in, retrying cancellations that applied nothing. onCancel
// decides a cancellation by its per-item reasons (errRetryTransaction to
// try again); unknown decides a failure whose outcome is unknown (the
// reply never came, after the SDK's own retries).
func (s *GameServers) transact(ctx context.Context, in *dynamodb.TransactWriteItemsInput, onCancel func([]types.CancellationReason) error, unknown func() error,
	opts ...func(*dynamodb.Options)) error {
	for try := 1; ; try++ {
		_, err := s.db.TransactWriteItems(ctx, in, opts...)
		if err == nil {
			return nil
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			return unknown()
		}
		if len(tce.CancellationReasons) == len(in.TransactItems) {
			if err := onCancel(tce.CancellationReasons); !errors.Is(err, errRetryTransaction) {
				return err
			}
		}
		if try == txnTries {
			return fmt.Errorf("transaction cancelled %d times (%s): not applied", try, reasonCodes(tce.CancellationReasons))
		}
		if werr := wait.Sleep(ctx, txnPause/2+rand.N(txnPause)); werr != nil {
			return werr
		}
		in.ClientRequestToken = nil // a new transaction, not a retry of the cancelled one
	}
}

func (s *GameServers) txnUpdate(table string, k map[string]types.AttributeValue, e *expr, cond string) *types.Update {
	return &types.Update{TableName: aws.String(table), Key: k, UpdateExpression: aws.String(e.update()), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
}

func serverKey(address string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{GameServerKey: &types.AttributeValueMemberS{Value: address}}
}

func failedCondition(r types.CancellationReason) bool {
	return aws.ToString(r.Code) == "ConditionalCheckFailed"
}

// held reports whether a server item's sessions hold id.
func held(item map[string]types.AttributeValue, id string) bool {
	ss, ok := item["sessions"].(*types.AttributeValueMemberSS)
	return ok && slices.Contains(ss.Value, id)
}

func reasonCodes(reasons []types.CancellationReason) string {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = aws.ToString(r.Code)
	}
	return strings.Join(codes, ", ")
}
